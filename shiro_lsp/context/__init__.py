"""Pure functions over messages: estimate, prune, repair, ladder, summaries. No I/O."""

from shiro_lsp.context.estimate import TokenEstimator, estimate_text, estimate_tokens
from shiro_lsp.context.ladder import KEEP_LADDER, dropped_span, fits, prune_to_fit
from shiro_lsp.context.prune import (
    detach_orphaned_items,
    detach_provider_items,
    drop_orphaned_results,
    prune_messages,
    prune_preserving_items,
)
from shiro_lsp.context.summary import (
    COMPACT_SUMMARY_PREFIX,
    COMPACT_SYSTEM_PROMPT,
    PRUNED_SPAN_PREFIX,
    SPAN_SUMMARY_SYSTEM_PROMPT,
    SpanSummaries,
    digest_of,
    is_summary_note,
    span_summary_request,
    summary_note,
    with_span_summary,
)

__all__ = [
    "COMPACT_SUMMARY_PREFIX",
    "COMPACT_SYSTEM_PROMPT",
    "KEEP_LADDER",
    "PRUNED_SPAN_PREFIX",
    "SPAN_SUMMARY_SYSTEM_PROMPT",
    "SpanSummaries",
    "TokenEstimator",
    "detach_orphaned_items",
    "detach_provider_items",
    "digest_of",
    "drop_orphaned_results",
    "dropped_span",
    "estimate_text",
    "estimate_tokens",
    "fits",
    "is_summary_note",
    "prune_messages",
    "prune_preserving_items",
    "prune_to_fit",
    "span_summary_request",
    "summary_note",
    "with_span_summary",
]
