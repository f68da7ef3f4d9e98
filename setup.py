"""A thin shim for tools that look for setup.py: every setting is in pyproject.toml.

setuptools reads the metadata, packages and package data from pyproject.toml's [project] and
[tool.setuptools] tables; this file adds nothing, so that they stay in one place.
"""

from setuptools import setup

setup()
