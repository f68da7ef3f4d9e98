"""TLS: verification is on by default, --insecure skips it (and says so), --cacert adds a CA.

The server is a small asyncio HTTPS responder on loopback with a certificate made for the test.
"""

import asyncio
import datetime
import ipaddress
import ssl
import threading

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kfp_bench.errors import ConfigError
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.workers import run_load
from tests.conftest import run_cli


def _self_signed(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kfp-bench test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def https_server(tmp_path_factory):
    cert, key = _self_signed(tmp_path_factory.mktemp("tls"))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    loop = asyncio.new_event_loop()

    async def handle(reader, writer):
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0, ssl=ctx))
    port = server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{port}/", cert
    loop.call_soon_threadsafe(server.close)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_verification_is_on_by_default(https_server):
    url, _ = https_server
    stats = run_load(LoadOptions(url=url, requests=3, concurrency=1))
    assert stats.ok == 0
    (error,) = stats.errors
    assert "certificate verify failed" in error and "--cacert" in error


def test_cacert_trusts_the_server(https_server):
    url, cert = https_server
    stats = run_load(LoadOptions(url=url, requests=20, concurrency=2, cacert=str(cert)))
    assert stats.status_codes == {200: 20}
    assert "insecure" not in stats.flags


def test_insecure_is_explicit_and_reported(https_server):
    url, _ = https_server
    r = run_cli("load", "-n", "10", "-c", "2", "--insecure", url)
    assert r.returncode == 0, r.stderr
    assert "  [200]\t10 responses" in r.stdout
    assert "WARNING: TLS verification was off (--insecure)" in r.stdout


def test_bad_cacert_is_refused(tmp_path):
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    with pytest.raises(ConfigError, match="--cacert"):
        LoadOptions(url="https://127.0.0.1:9/", cacert=str(bad)).validate()
