"""Firecrawl's `team/credit-usage` and `team/token-usage` answers (an external contract).

The key service makes them from its usage records (`openmono_keys.firecrawl`); the gateway sends
those two paths there. v1 writes the fields snake_case, v2 camelCase: one model each, the same
numbers. This box has no credit plan: `remaining*` is `UNLIMITED` and `plan*` null, and the
numbers measured are in `creditsUsed` / `tokensUsed` (fields Firecrawl does not send, which its
clients ignore).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

# what `remainingCredits`/`remainingTokens` say when nothing is ever refused for credits; an
# int32 so typed clients read it
UNLIMITED = 2**31 - 1


class _V1(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _V2(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", serialize_by_alias=True
    )


class CreditUsageV1(_V1):
    remaining_credits: int = UNLIMITED
    plan_credits: int | None = None
    billing_period_start: str | None = None
    billing_period_end: str | None = None
    credits_used: int = 0


class CreditUsageV2(_V2):
    remaining_credits: int = UNLIMITED
    plan_credits: int | None = None
    billing_period_start: str | None = None
    billing_period_end: str | None = None
    credits_used: int = 0


class TokenUsageV1(_V1):
    remaining_tokens: int = UNLIMITED
    plan_tokens: int | None = None
    billing_period_start: str | None = None
    billing_period_end: str | None = None
    tokens_used: int = 0


class TokenUsageV2(_V2):
    remaining_tokens: int = UNLIMITED
    plan_tokens: int | None = None
    billing_period_start: str | None = None
    billing_period_end: str | None = None
    tokens_used: int = 0


class TeamUsageResponse(BaseModel):
    success: Literal[True] = True
    data: CreditUsageV1 | CreditUsageV2 | TokenUsageV1 | TokenUsageV2
