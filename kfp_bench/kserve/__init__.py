"""KServe: InferenceServices from parameters, deploy, wait and delete, and the replica watcher.

``spec`` (parameters -> the InferenceService's JSON body, checked), ``llm`` (an LLM predictor's
spec and the OpenAI route it serves), ``kube`` (the one small interface over the kubernetes
client), ``deploy`` (deploy, wait until ready, delete), ``watch`` (ready and total pods and the
Knative PodAutoscaler's scales, as rows) and ``coldstart`` (time to the first success from zero
pods). Importing this package imports no Kubernetes client.
"""
