"""Attacks on the stack, each reproduced by a test that fails without its fix (issue 36).

The index: one finding, one test module. A finding's test drives the real parts (the agent's
permission engine and tools, the worker, Redis, the gateway, the scrape service) the way a local
user, a malicious web page or a malicious repository would, and checks that the attack is refused
at its cause.

High
 1. "Read-only" Bash commands that write files or run code      test_bash_sandbox.py
 2. An untrusted project's settings widen permissions or
    redirect the key and the prompt                              test_project_settings_trust.py
 3. Redis without a password; secrets in queued calls; results
    readable after use; workspaces the worker was not given      test_redis_auth.py

Medium
 4. A project playbook shadows a shipped one without trust       test_playbook_trust.py
 5. A session rule matches a chained or substituted command      test_session_rules.py
 6. WebSearch's query leaves the box through the public
    fallback without opt-in; read_top content not marked         test_websearch_egress.py
 7. One key's crawl takes the whole shared job budget            test_crawl_budget_per_key.py
 8. The scrape service's Chromium runs as root without sandbox   test_chromium_sandbox.py

Low
 9. The key service's /v1/rate and the token tap without the
    gateway's own secret                                         test_keys_service_auth.py
10. `setsid` escapes the end-of-call kill; no rlimits            test_process_limits.py
11. Data dir and logs readable by others; URLs logged with query test_data_dir_modes.py
12. Box keys read the operator's /metrics, /slots, /props paths  test_box_key_routes.py
13. Webhook URLs checked only at delivery; another key's job 409 test_webhook_and_job_ids.py
14. /firecrawl answers bad bodies in FastAPI's shape             test_firecrawl_error_shape.py
15. Lsp/CodeIntel start project-executing servers untrusted      test_lsp_trust.py
"""
