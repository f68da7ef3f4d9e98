"""The server's side during a load: metrics profiles (named PromQL queries run against a
Prometheus over the load's window), direct ``/metrics`` scrapes sampled while the load runs, and
the series they give, stored beside the client's results (docs/metrics-profiles.md)."""
