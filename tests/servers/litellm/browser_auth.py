"""The one credential a browser gets from the tests' LiteLLM proxy: a token of its own.

A browser is never given the proxy's master key, which administers it (makes keys,
spends on every model). LiteLLM's answer for a browser is a virtual key
(`/key/generate`, limited to some models and a budget), but virtual keys live in its
database, which this proxy does not have (it would need Prisma's engines, downloaded at
run time), and they begin with `sk-`, which Familiar refuses in a header as it refuses a
provider's key. So, as LiteLLM's `custom_auth` lets a proxy without a database do, the
browser's token is checked here: it opens the models named below (LiteLLM's own key
checks, run after this one, hold it to them), at most RPM requests a minute, and only
the routes a chat needs: no key, user or team management. The master key is
LITELLM_MASTER_KEY, drawn by scripts/test.sh; this hook takes nothing else, so not even
the master key opens this proxy.
"""
from fastapi import HTTPException, Request
from litellm.proxy._types import UserAPIKeyAuth

# The browser tests' token (tests/model_client.rs, PROXY_TOKEN).
BROWSER_TOKEN = "familiar-proxy-token-7c1d9e2b4a6f8e3d5c0b"
# What it opens: config.yaml's models, and a rate no test comes near.
MODELS = ["scripted", "scripted-window"]
RPM = 600
# The routes it opens: a chat, and the model list and windows the client reads.
ROUTES = {"/chat/completions", "/v1/chat/completions", "/models", "/v1/models",
          "/model/info", "/v1/model/info"}


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    """LiteLLM's custom_auth hook: the browser's token, limited, or 401. Read from
    `X-Proxy-Token`, as Familiar's Settings and extension send it, or else from
    `Authorization: Bearer`, which LiteLLM passes as `api_key`."""
    token = request.headers.get("x-proxy-token") or api_key
    if token != BROWSER_TOKEN:
        raise HTTPException(status_code=401, detail="this proxy takes only the browser tests' token")
    if request.url.path not in ROUTES:
        raise HTTPException(status_code=403, detail="the browser's token opens only a chat and the model list")
    return UserAPIKeyAuth(api_key=token, models=MODELS, rpm_limit=RPM)
