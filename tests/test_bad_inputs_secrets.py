"""No refusal echoes a secret: a known token fed through every refusal of a flag that takes a
header, a URL or a token-like parameter, each case run as a real ``kfp-bench`` process as in
``tests/test_bad_inputs.py`` (its ``run_cases``: a fresh working directory and TMPDIR, no token,
KFP or proxy variables). Each case checks exit code 2, one line naming the input and the fix, and
that the token is nowhere: not in stdout, stderr or any file the process left.

What a refusal repeats goes through the reports' redaction (``kfp_bench.redact``): a secret
header's value masked, of a malformed header only a leading word that reads as a name, a URL's
userinfo dropped (with or without its scheme), and a token-like parameter's value not shown.
"""

from __future__ import annotations

import pytest

from kfp_bench import redact
from tests.test_bad_inputs import (
    DEAD,
    RESULTS,
    Case,
    Outcome,
    assert_one_line_refusal,
    run_cases,
)

#: The secret, as a user's token looks: letters, digits and a hyphen.
TOKEN = "s3cr3t-T0KEN-81f3a9"
USER = f"alice:{TOKEN}"
HIDDEN = "<redacted>"
HELLO = "{ref}/hello_world.yaml"
LOAD = ("load", "-n", "1", "-c", "1")
SCRAPE = (*LOAD, "--scrape", DEAD + "/metrics")
SUBMIT = ("submit", "--host", DEAD, "--param")
RUNS = ("runs", "--num-runs", "1", "--host")

CASES = [
    # -- headers: -H of load, sweep and llm, --scrape-header ----------------------------------
    Case(
        "load-header-without-colon",
        (*LOAD, "-H", f"Authorization Bearer {TOKEN}", DEAD + "/"),
        (f"-H 'Authorization {HIDDEN}': not a header", "write it as -H 'Name: value'"),
    ),
    Case(
        "sweep-header-without-colon",
        ("sweep", "--rates", "5", "-H", f"Authorization Bearer {TOKEN}", DEAD + "/"),
        (f"-H 'Authorization {HIDDEN}': not a header", "write it as -H 'Name: value'"),
    ),
    Case(
        "llm-header-without-colon",
        ("llm", "-H", f"Authorization Bearer {TOKEN}", DEAD + "/openai"),
        (f"-H 'Authorization {HIDDEN}': not a header", "write it as -H 'Name: value'"),
    ),
    Case(
        "load-header-space-before-colon",
        (*LOAD, "-H", f"Authorization : Bearer {TOKEN}", DEAD + "/"),
        (f"-H 'Authorization : {HIDDEN}': not a header",),
    ),
    Case(
        "load-header-without-name",
        (*LOAD, "-H", f"Bearer {TOKEN}", DEAD + "/"),
        (f"-H 'Bearer {HIDDEN}': not a header",),
    ),
    Case(
        "load-header-token-alone",
        (*LOAD, "-H", TOKEN, DEAD + "/"),
        (f"-H '{HIDDEN}': not a header", "write it as -H 'Name: value'"),
    ),
    Case(
        "load-second-header-named-as-secret",
        (*LOAD, "-H", "X-Trace: 1", "-H", f"X-Api-Key {TOKEN}", DEAD + "/"),
        (f"-H 'X-Api-Key {HIDDEN}': not a header",),
    ),
    Case(
        "load-header-crlf-then-a-secret-header",
        (*LOAD, "-H", f"X-A: 1\r\nAuthorization: Bearer {TOKEN}", DEAD + "/"),
        (f"-H 'X-A: 1\\r\\nAuthorization: {HIDDEN}': holds a control character", "remove it"),
    ),
    Case(
        "load-secret-header-with-crlf",
        (*LOAD, "-H", f"Authorization: Bearer {TOKEN}\r\nX-B: 2", DEAD + "/"),
        (f"-H 'Authorization: {HIDDEN}\\r\\nX-B: 2': holds a control character",),
    ),
    Case(
        "scrape-header-token-alone",
        (*SCRAPE, "--scrape-header", TOKEN, DEAD + "/"),
        (f"--scrape-header '{HIDDEN}'", "give 'Name: value'"),
    ),
    Case(
        "scrape-header-without-colon",
        (*SCRAPE, "--scrape-header", f"Authorization Bearer {TOKEN}", DEAD + "/"),
        (f"--scrape-header 'Authorization {HIDDEN}'", "give 'Name: value'"),
    ),
    Case(
        "scrape-header-line-break",
        (*SCRAPE, "--scrape-header", f"Authorization: Bearer {TOKEN}\nx", DEAD + "/"),
        ("--scrape-header Authorization: the value has a line break", "remove it"),
    ),
    # -- URLs with userinfo -------------------------------------------------------------------
    Case(
        "load-url-scheme",
        ("load", f"ftp://{USER}@127.0.0.1/"),
        ("URL 'ftp://127.0.0.1/': scheme 'ftp'", "use http:// or https://"),
    ),
    Case(
        "load-url-port",
        ("load", f"http://{USER}@127.0.0.1:99999/"),
        ("URL 'http://127.0.0.1:99999/'", "give e.g. http://host:8080/path"),
    ),
    Case(
        "load-url-no-host",
        ("load", f"http://{USER}@/"),
        ("URL 'http:///': no host", "give e.g. http://127.0.0.1:8080/"),
    ),
    Case(
        "sweep-url-scheme",
        ("sweep", "--rates", "5", f"ftp://{USER}@127.0.0.1/"),
        ("URL 'ftp://127.0.0.1/': scheme 'ftp'",),
    ),
    Case(
        "llm-url-with-v1",
        ("llm", f"http://{USER}@127.0.0.1:1/openai/v1"),
        ("URL 'http://127.0.0.1:1/openai/v1'", "give the base URL without /v1"),
    ),
    Case(
        "runs-pipeline-url-unreachable",
        (*RUNS, DEAD, "--pipeline", f"http://{USER}@127.0.0.1:1/p.yaml"),
        ("--pipeline http://127.0.0.1:1/p.yaml: cannot reach it", "check the address"),
    ),
    Case(
        "runs-host-without-scheme",
        (*RUNS, f"{USER}@127.0.0.1:1", "--pipeline", HELLO),
        ("--host '127.0.0.1:1'", "give a URL such as http://127.0.0.1:8888"),
    ),
    Case(
        "report-pushgateway-without-scheme",
        ("report", "r", "--pushgateway-url", f"{USER}@pushgateway:9091"),
        ("--pushgateway-url 'pushgateway:9091'", "http(s)://HOST:PORT"),
        files=RESULTS,
    ),
    Case(
        "report-results-uri-query",
        ("report", "r", "--results-uri", f"s3://bucket/p?endpoint=http://{USER}@h&x=1"),
        ("--results-uri s3://bucket/p?endpoint=http://h&x=1", "endpoint=URL and region=NAME"),
        files=RESULTS,
    ),
    Case(
        "report-results-uri-userinfo",
        ("report", "r", "--results-uri", f"s3://{USER}@bucket/p"),
        ("--results-uri s3://bucket/p: credentials in the URI are not used", "AWS_ACCESS_KEY_ID"),
        files=RESULTS,
    ),
    Case(
        "report-results-uri-scheme",
        ("report", "r", "--results-uri", f"ftp://{USER}@h/p"),
        ("--results-uri ftp://h/p: scheme ftp:// is not supported",),
        files=RESULTS,
    ),
    Case(
        "compile-pip-index-url",
        ("compile", "--pip-index-url", f"ftp://{USER}@mirror/simple", "--out", "c"),
        ("--pip-index-url 'ftp://mirror/simple'", "give the http(s) URL of a package index"),
    ),
    Case(
        "compile-wheel-url-without-sha256",
        ("compile", "--wheel-url", f"https://{USER}@h/kfp_bench.whl", "--out", "c"),
        ("--wheel-url 'https://h/kfp_bench.whl' needs --sha256",),
    ),
    Case(
        "install-unknown-flag-with-url",
        ("install", "--namespace", "ns", "--wheel-url", f"https://{USER}@h/kfp_bench.whl"),
        ("unrecognized arguments: --wheel-url https://h/kfp_bench.whl",),
    ),
    # -- pipeline parameters (submit runs the first step's checks before sending) -------------
    Case(
        "submit-param-inference-url",
        (*SUBMIT, f"inference_url=ftp://{USER}@iris/v1/models/iris:predict"),
        ("inference_url='ftp://iris/v1/models/iris:predict'", "give a http/https URL"),
    ),
    Case(
        "submit-param-kfp-host-without-scheme",
        (*SUBMIT, f"kfp_host={USER}@ml-pipeline:8888"),
        ("kfp_host='ml-pipeline:8888'", "give a http/https URL"),
    ),
    Case(
        "submit-param-results-uri-query",
        (*SUBMIT, f"results_uri=s3://bucket/p?endpoint=http://{USER}@h&x=1"),
        ("results_uri='s3://bucket/p?endpoint=http://h&x=1'", "endpoint=URL and region=NAME"),
    ),
    Case(  # set for a part switched off: noted once the run is made, not refused
        "submit-param-prometheus-url",
        (*SUBMIT, f"prometheus_url=http://{USER}@prometheus:9090"),
        ("--host http://127.0.0.1:1", "cannot reach"),
    ),
    Case(
        "submit-param-prometheus-url-without-scheme",
        (*SUBMIT, "metrics_profile=kfp", "--param", f"prometheus_url={USER}@prometheus:9090"),
        ("prometheus_url='prometheus:9090'", "give a http/https URL"),
    ),
    Case(
        "submit-param-pipeline-url",
        (*SUBMIT, f"pipeline=ftp://{USER}@h/p.yaml"),
        ("pipeline='ftp://h/p.yaml'", "or a http/https/gs URL"),
    ),
    Case(
        "submit-param-token-secret",
        (*SUBMIT, f"token_secret={TOKEN}"),
        ("pipeline parameter token_secret", "give a Kubernetes Secret name"),
    ),
]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    """Every case, run a few at a time; none talks to a KFP server (each is refused first)."""
    return run_cases(CASES, None, tmp_path_factory)


def _left(o: Outcome) -> list:
    """The files the case's process made, in its working directory and TMPDIR."""
    made = [p for p in o.cwd.rglob("*") if str(p.relative_to(o.cwd)) not in o.made]
    return [p for p in [*made, *o.tmpdir.rglob("*")] if p.is_file()]


def test_every_case_has_its_own_id_and_feeds_the_token():
    assert len({c.id for c in CASES}) == len(CASES)
    assert all(any(TOKEN in a for a in c.argv) for c in CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_a_refusal_names_the_input_and_never_the_token(case: Case, outcomes):
    o = outcomes[case.id]
    r = o.result
    assert r is not None, "no answer in 120 s"
    assert TOKEN not in r.stdout + r.stderr, r.stderr
    for path in _left(o):
        assert TOKEN not in path.read_text(errors="replace"), path
    assert_one_line_refusal(r, case.expect)


# -- the redaction itself ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("Content-Type: application/json", "Content-Type: application/json"),
        (f"Authorization: Bearer {TOKEN}", f"Authorization: {HIDDEN}"),
        (f"X-Auth-Token: {TOKEN}", f"X-Auth-Token: {HIDDEN}"),
        (f"Cookie: session={TOKEN}", f"Cookie: {HIDDEN}"),
        ("Authorization:", "Authorization:"),
        (f"Authorization Bearer {TOKEN}", f"Authorization {HIDDEN}"),
        (f"Authorization=Bearer {TOKEN}", HIDDEN),
        (TOKEN, HIDDEN),
        ("no-colon-here", "no-colon-here"),
        (f"X-A: 1\r\nCookie: {TOKEN}", f"X-A: 1\r\nCookie: {HIDDEN}"),
    ],
)
def test_a_header_is_shown_as_the_reports_show_it(given, shown):
    assert redact.header(given) == shown


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (f"https://{USER}@kfp.example:8443/p?q=1", "https://kfp.example:8443/p?q=1"),
        (f"{USER}@ml-pipeline:8888", "ml-pipeline:8888"),
        (f"{USER}@h:80/v1/models/m:predict", "h:80/v1/models/m:predict"),
        (f"s3://b/p?endpoint=http://{USER}@h:9000", "s3://b/p?endpoint=http://h:9000"),
        (f"http://alice:p@ss{TOKEN}@h/x", "http://h/x"),  # an unescaped @ in the password
        ("http://h/x?mail=a@b", "http://h/x?mail=a@b"),
        ("iris:8080/v1", "iris:8080/v1"),
        ("./results@2026/x", "./results@2026/x"),
    ],
)
def test_a_url_is_shown_without_its_userinfo(given, shown):
    assert redact.public_url(given) == shown


def test_a_parameter_named_as_a_credential_is_hidden():
    assert redact.param("token_secret", TOKEN) == HIDDEN
    assert redact.param("llm_tokenizer", "t.json") == "t.json"
    assert redact.param("metrics_scrape_token", True) is True
    assert redact.param("inference_url", f"http://{USER}@h/x") == "http://h/x"
