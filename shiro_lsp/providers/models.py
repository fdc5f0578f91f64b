"""Which models an endpoint serves, how big their context windows are, and which local server is running.

Local model servers speak OpenAI's ``GET /v1/models`` but each adds its own metadata: vLLM puts
``max_model_len`` on every model, llama.cpp answers ``GET /props`` with the window it was started
with (``default_generation_settings.n_ctx``) and puts ``meta.n_ctx_train`` on its model, LM Studio
lists ``loaded_context_length`` / ``max_context_length`` under ``/api/v0/models``, and Ollama says what
a loaded model really got in ``GET /api/ps`` (``context_length``) and what a model is set to, and
can do, in ``POST /api/show`` (``num_ctx`` in ``parameters``, ``capabilities``). Which server it is
comes from what it answers (``owned_by``, ``/props``), then from its well-known port.

Nothing here raises for an endpoint that is down or odd: the listing carries ``error`` instead, in
words a person can act on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from shiro_lsp.bounded import context_window, context_window_refusal, small_int
from shiro_lsp.providers.factory import is_local, is_official, resolve_endpoint
from shiro_lsp.providers.types import ProviderError

Preset = Literal["ollama", "lmstudio", "llamacpp", "vllm", "openai"]

# The local servers a user is likely to run, in the order detection reports them.
LOCAL_PRESETS: Mapping[Preset, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
    "vllm": "http://127.0.0.1:8000/v1",
}
PRESET_NAMES: Mapping[Preset, str] = {
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llamacpp": "llama.cpp",
    "vllm": "vLLM",
    "openai": "OpenAI",
}
_PRESET_PORTS: Mapping[int | None, Preset] = {urlsplit(url).port: name for name, url in LOCAL_PRESETS.items()}
_OWNERS: Mapping[str, Preset] = {"llamacpp": "llamacpp", "vllm": "vllm", "organization_owner": "lmstudio"}
# Keys other servers use for a model's window (vLLM, OpenRouter, Groq, LM Studio, ...).
_WINDOW_KEYS = (
    "loaded_context_length",
    "max_model_len",
    "context_length",
    "context_window",
    "max_context_length",
)

LIST_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 2.0
# What Ollama gives a model that sets no num_ctx on a machine under 24 GiB of VRAM (its docs,
# "Context length"); OLLAMA_CONTEXT_LENGTH or a bigger GPU give more, which the API only shows once
# the model is loaded (/api/ps). Assuming more than the model gets makes Ollama cut the prompt's start.
OLLAMA_DEFAULT_WINDOW = 4096
OLLAMA_SHOW_LIMIT = 32  # /api/show calls per listing (one per model)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    context_window: int | None = None
    native_tools: bool | None = None
    """Whether the server takes native tool calls for this model (Ollama's capabilities); None: unknown."""
    images: bool | None = None
    """Whether the model takes images (Ollama's ``vision`` capability, llama.cpp's ``modalities``, an
    ``architecture.input_modalities`` list as OpenRouter's); None: unknown."""


@dataclass(frozen=True)
class ModelListing:
    base_url: str
    preset: Preset | None
    models: list[ModelInfo] = field(default_factory=list)
    error: str | None = None
    refused: tuple[str, ...] = ()
    """Context windows the server reported that are not used (:func:`refused_windows`)."""

    def window_of(self, model: str) -> int | None:
        return next((m.context_window for m in self.models if m.id == model), None)

    def info_of(self, model: str) -> ModelInfo | None:
        return next((m for m in self.models if m.id == model), None)


@dataclass(frozen=True)
class Detection:
    endpoints: list[ModelListing]
    message: str


def preset_by_url(base_url: str) -> Preset | None:
    """The preset a URL points at by itself: OpenAI's host, or a local server's well-known port."""
    if is_official(base_url):
        return "openai"
    if is_local(base_url):
        return _PRESET_PORTS.get(urlsplit(base_url).port)
    return None


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port`` (where llama.cpp's /props and LM Studio's /api live)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _positive_int(value: Any) -> int | None:
    """A context window the server reports, when it is a plausible one (see :func:`refused_windows`)."""
    return context_window(value)


def refused_windows(entries: Sequence[Mapping[str, Any]], props: Mapping[str, Any] | None) -> list[str]:
    """What the server reports as a context window that is no plausible one (1 token, 400 digits),
    each naming the field: such a window is not used (the model's is then unknown)."""
    fields: list[tuple[str, Any]] = []
    for entry in entries:
        fields += [(f"/v1/models {key}", entry.get(key)) for key in _WINDOW_KEYS]
        meta = entry.get("meta")
        if isinstance(meta, Mapping):
            fields.append(("/v1/models meta.n_ctx_train", meta.get("n_ctx_train")))
    if props is not None:
        settings = props.get("default_generation_settings")
        fields.append(("/props n_ctx", (settings if isinstance(settings, Mapping) else props).get("n_ctx")))
    return [
        context_window_refusal(f"The model server's {field}", value)
        for field, value in fields
        if isinstance(value, int) and not isinstance(value, bool) and context_window(value) is None
    ]


def window_from_entry(entry: Mapping[str, Any]) -> int | None:
    """A context window the model entry itself reports (not the training length, unless that is all)."""
    for key in _WINDOW_KEYS:
        window = _positive_int(entry.get(key))
        if window:
            return window
    meta = entry.get("meta")
    if isinstance(meta, Mapping):
        return _positive_int(meta.get("n_ctx_train"))
    return None


def window_from_props(props: Mapping[str, Any]) -> int | None:
    """llama.cpp's /props: the window each slot really has (``--ctx-size`` split over ``--parallel``)."""
    settings = props.get("default_generation_settings")
    if isinstance(settings, Mapping):
        return _positive_int(settings.get("n_ctx"))
    return _positive_int(props.get("n_ctx"))


def images_from_props(props: Mapping[str, Any]) -> bool | None:
    """llama.cpp's /props: ``modalities.vision`` (true only when it was started with a projector)."""
    modalities = props.get("modalities")
    vision = modalities.get("vision") if isinstance(modalities, Mapping) else None
    return vision if isinstance(vision, bool) else None


def images_from_entry(entry: Mapping[str, Any]) -> bool | None:
    """A /v1/models entry's ``architecture.input_modalities`` (OpenRouter), if it has one."""
    architecture = entry.get("architecture")
    modalities = architecture.get("input_modalities") if isinstance(architecture, Mapping) else None
    return "image" in modalities if isinstance(modalities, list) else None


def preset_by_answer(entries: Sequence[Mapping[str, Any]], props: Mapping[str, Any] | None) -> Preset | None:
    if props is not None and window_from_props(props) is not None:
        return "llamacpp"
    owners = {str(e.get("owned_by", "")) for e in entries}
    for owner, preset in _OWNERS.items():
        if owner in owners:
            return preset
    if owners == {"library"}:
        return "ollama"
    return None


def _get_json(client: Any, url: str) -> Any:
    response = client.get(url)
    response.raise_for_status()
    return response.json()


def _listing_error(base_url: str, error: Exception) -> str:
    import httpx2

    if isinstance(error, httpx2.TimeoutException):
        return f"{base_url} did not answer in time."
    if isinstance(error, httpx2.ConnectError):
        return f"Nothing answers at {base_url}. Is the model server running?"
    if isinstance(error, httpx2.HTTPStatusError):
        status = error.response.status_code
        if status in (401, 403):
            return f'{base_url} refused the API key (HTTP {status}). Set it with "Shiro: Set API key".'
        return f"{base_url}/models answered HTTP {status}; it may not be an OpenAI-compatible endpoint."
    if isinstance(error, ValueError):
        return f"{base_url}/models did not answer with a model list."
    return f"Could not list the models at {base_url}: {error}"


async def list_endpoint_models(
    base_url: str | None,
    api_key: str | None,
    *,
    timeout: float = LIST_TIMEOUT_S,
    use_environment_key: bool = True,
) -> ModelListing:
    """The models ``base_url`` serves with their context windows, and which server it is."""
    try:
        url, key = resolve_endpoint(base_url, api_key, environment=use_environment_key)
    except ProviderError as error:
        url = (base_url or "").rstrip("/")
        return ModelListing(url, preset_by_url(url) if url else None, error=error.message)
    # In a thread, with a blocking client: the first call imports httpx2, every client loads the
    # CA bundle, and the first request imports its transport (~150 ms of CPU all told).
    return await asyncio.to_thread(_listing, url, key, timeout)


def _listing(url: str, key: str, timeout: float) -> ModelListing:
    import httpx2

    headers = {"authorization": f"Bearer {key}"}
    with httpx2.Client(headers=headers, timeout=timeout, follow_redirects=True) as client:
        try:
            body = _get_json(client, url + "/models")
            entries = body.get("data") if isinstance(body, dict) else None
            if not isinstance(entries, list):
                raise ValueError("no data list")
        except Exception as error:
            return ModelListing(url, preset_by_url(url), error=_listing_error(url, error))
        entries = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
        props = _optional_json(client, server_root(url) + "/props") if is_local(url) else None
        preset = preset_by_answer(entries, props) or preset_by_url(url)
        windows = {str(e["id"]): window_from_entry(e) for e in entries}
        if preset == "lmstudio":
            windows.update(_lmstudio_windows(client, url))
        if preset == "ollama":
            return ModelListing(url, preset, _ollama_models(client, url, sorted(windows)))
        served = window_from_props(props) if props is not None else None
        served_images = images_from_props(props) if props is not None else None
        by_id = {str(e["id"]): e for e in entries}
        models = [
            # llama.cpp serves one model: its /props window is what a request really gets.
            ModelInfo(
                model_id,
                served if served is not None else windows[model_id],
                images=served_images
                if served_images is not None
                else images_from_entry(by_id.get(model_id, {})),
            )
            for model_id in sorted(windows)
        ]
        return ModelListing(url, preset, models, refused=tuple(refused_windows(entries, props)))


def _optional_json(client: Any, url: str) -> dict[str, Any] | None:
    try:
        body = _get_json(client, url)
    except Exception:
        return None
    return body if isinstance(body, dict) else None


def _ollama_models(client: Any, base_url: str, ids: list[str]) -> list[ModelInfo]:
    root = server_root(base_url)
    loaded = ollama_loaded_windows(_optional_json(client, root + "/api/ps") or {})
    shows = {i: _optional_post(client, root + "/api/show", {"model": i}) for i in ids[:OLLAMA_SHOW_LIMIT]}
    return [ollama_model(i, loaded.get(i), shows.get(i)) for i in ids]


def ollama_loaded_windows(ps: Mapping[str, Any]) -> dict[str, int]:
    """``GET /api/ps``: the window each loaded model really has."""
    found: dict[str, int] = {}
    for entry in ps.get("models") or []:
        if isinstance(entry, Mapping):
            name, window = entry.get("model") or entry.get("name"), _positive_int(entry.get("context_length"))
            if isinstance(name, str) and window:
                found[name] = window
    return found


def ollama_model(model_id: str, loaded_window: int | None, show: Mapping[str, Any] | None) -> ModelInfo:
    """One Ollama model: the loaded window, else its num_ctx, else Ollama's default (never over its training length)."""
    if show is None:
        return ModelInfo(model_id, loaded_window or OLLAMA_DEFAULT_WINDOW)
    trained = _ollama_trained_window(show.get("model_info"))
    window = loaded_window or _ollama_num_ctx(show.get("parameters")) or OLLAMA_DEFAULT_WINDOW
    if trained is not None and loaded_window is None:
        window = min(window, trained)
    capabilities = show.get("capabilities")
    tools = "tools" in capabilities if isinstance(capabilities, list) else None
    vision = "vision" in capabilities if isinstance(capabilities, list) else None
    return ModelInfo(model_id, window, native_tools=tools, images=vision)


def _ollama_num_ctx(parameters: Any) -> int | None:
    """``num_ctx 8192`` in the Modelfile parameters Ollama shows (one ``name value`` per line)."""
    if not isinstance(parameters, str):
        return None
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx":
            return _positive_int(small_int(value))
    return None


def _ollama_trained_window(model_info: Any) -> int | None:
    if not isinstance(model_info, Mapping):
        return None
    return next((_positive_int(v) for k, v in model_info.items() if str(k).endswith(".context_length")), None)


def _optional_post(client: Any, url: str, body: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        response = client.post(url, json=dict(body))
        response.raise_for_status()
        answer = response.json()
    except Exception:
        return None
    return answer if isinstance(answer, dict) else None


def _lmstudio_windows(client: Any, base_url: str) -> dict[str, int]:
    body = _optional_json(client, server_root(base_url) + "/api/v0/models")
    entries = body.get("data") if body else None
    if not isinstance(entries, list):
        return {}
    found: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            window = window_from_entry(entry)
            if window:
                found[entry["id"]] = window
    return found


async def detect_local(
    candidates: Mapping[str, str] | Sequence[str] | None = None, *, timeout: float = PROBE_TIMEOUT_S
) -> Detection:
    """Probe the local presets (or the given base URLs) at once; report those that answer, in order."""
    urls = list(LOCAL_PRESETS.values()) if candidates is None else list(_urls(candidates))
    listings = await asyncio.gather(
        *(list_endpoint_models(url, None, timeout=timeout, use_environment_key=False) for url in urls)
    )
    answering = [listing for listing in listings if listing.error is None]
    return Detection(answering, detection_message(urls, answering))


def _urls(candidates: Mapping[str, str] | Sequence[str]) -> Sequence[str]:
    return list(candidates.values()) if isinstance(candidates, Mapping) else candidates


def _label(listing: ModelListing) -> str:
    name = PRESET_NAMES[listing.preset] if listing.preset else "A model server"
    count = len(listing.models)
    models = f"{count} model{'s' if count != 1 else ''}"
    return f"{name} at {listing.base_url} ({models})"


def _tried_label(url: str) -> str:
    preset = preset_by_url(url)
    return f"{PRESET_NAMES[preset]} ({url})" if preset else url


def detection_message(tried: Sequence[str], answering: Sequence[ModelListing]) -> str:
    if answering:
        found = "; ".join(_label(listing) for listing in answering)
        return f"Found {found}."
    names = ", ".join(_tried_label(url) for url in tried)
    return (
        f"No local model server answered. Tried {names}. Start Ollama, LM Studio, llama.cpp's "
        "llama-server or vLLM, or set shiro.baseUrl to the server's address."
    )
