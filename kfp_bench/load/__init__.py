"""HTTP load: options, pacing, the request loop and worker processes. Never prints.

``options.LoadOptions`` (what to send, checked before anything is sent), ``pacer`` (open-loop
schedules), ``engine`` (the uvloop + httptools request loop), ``workers.run_load`` (one or more
worker processes, merged) and ``sweep`` (open-loop steps and the knee).
"""
