"""Listing an endpoint's models with their context windows, and finding which local server runs."""

from __future__ import annotations

import socket

import pytest

from fakes.fake_openai import FakeOpenAI
from fakes.local_servers import LLAMACPP_CTX, LLAMACPP_MODEL, serve
from shiro_lsp.providers.models import (
    ModelInfo,
    detect_local,
    images_from_entry,
    images_from_props,
    list_endpoint_models,
    ollama_model,
    preset_by_url,
)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_llamacpp_is_recognised_and_its_props_window_wins(fake: FakeOpenAI) -> None:
    serve(fake, "llamacpp")
    listing = await list_endpoint_models(fake.base_url, None)
    assert listing.error is None
    assert listing.preset == "llamacpp"
    # the window the server was started with (-c), not the model's training length (32768)
    assert listing.models == [ModelInfo(LLAMACPP_MODEL, LLAMACPP_CTX)]
    assert [r["path"] for r in fake.requests] == ["/v1/models", "/props"]


async def test_vllm_reports_max_model_len(fake: FakeOpenAI) -> None:
    serve(fake, "vllm")
    listing = await list_endpoint_models(fake.base_url, None)
    assert listing.preset == "vllm"
    assert listing.models == [ModelInfo("Qwen/Qwen2.5-Coder-7B-Instruct", 32768)]


async def test_lmstudio_windows_come_from_its_own_api(fake: FakeOpenAI) -> None:
    serve(fake, "lmstudio")
    listing = await list_endpoint_models(fake.base_url, None)
    assert listing.preset == "lmstudio"
    assert listing.window_of("qwen2.5-coder-7b-instruct") == 4096  # the loaded window, not the maximum
    assert listing.window_of("text-embedding-nomic-embed-text-v1.5") == 2048


async def test_ollama_windows_are_what_each_model_really_gets(fake: FakeOpenAI) -> None:
    serve(fake, "ollama")
    listing = await list_endpoint_models(fake.base_url, None)
    assert listing.preset == "ollama"
    assert listing.models == [
        ModelInfo("gemma3:1b", 8192, native_tools=False, images=False),  # its num_ctx; no tool template
        ModelInfo("llama3.2:latest", 16384, native_tools=True, images=False),  # /api/ps: what it got
        ModelInfo("qwen2.5-coder:1.5b", 4096, native_tools=True, images=False),  # Ollama's default
    ]
    shown = sorted(r["body"]["model"] for r in fake.requests if r["path"] == "/api/show")
    assert shown == ["gemma3:1b", "llama3.2:latest", "qwen2.5-coder:1.5b"]


async def test_an_ollama_without_api_show_still_lists_with_the_default_window(fake: FakeOpenAI) -> None:
    serve(fake, "ollama")
    fake.post_routes, fake.get_routes = {}, {}  # an older or proxied Ollama: only the OpenAI routes
    listing = await list_endpoint_models(fake.base_url, None)
    assert listing.error is None
    assert {m.context_window for m in listing.models} == {4096}
    assert {m.native_tools for m in listing.models} == {None}


async def test_a_plain_openai_compatible_server(fake: FakeOpenAI) -> None:
    listing = await list_endpoint_models(fake.base_url, "sk-test")
    assert listing.preset is None and listing.error is None
    assert [m.id for m in listing.models] == ["gpt-4o", "gpt-5", "gpt-5-mini"]
    assert fake.requests[0]["headers"]["authorization"] == "Bearer sk-test"


async def test_a_refused_key_is_an_error_a_person_can_act_on(fake: FakeOpenAI) -> None:
    fake.api_key = "sk-right"
    listing = await list_endpoint_models(fake.base_url, "sk-wrong")
    assert listing.models == []
    assert listing.error is not None and "refused the API key (HTTP 401)" in listing.error


async def test_nothing_listening_says_so() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    listing = await list_endpoint_models(url, None)
    assert listing.error == f"Nothing answers at {url}. Is the model server running?"
    assert listing.models == []


async def test_a_remote_endpoint_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = await list_endpoint_models("https://api.openai.com/v1", None)
    assert listing.preset == "openai"
    assert listing.error is not None and "No API key" in listing.error


def test_presets_by_url() -> None:
    assert preset_by_url("http://127.0.0.1:11434/v1") == "ollama"
    assert preset_by_url("http://localhost:1234/v1") == "lmstudio"
    assert preset_by_url("http://127.0.0.1:8080/v1") == "llamacpp"
    assert preset_by_url("http://127.0.0.1:8000/v1") == "vllm"
    assert preset_by_url("https://api.openai.com/v1") == "openai"
    assert preset_by_url("http://10.1.2.3:8080/v1") is None  # a remote box on a preset's port is not known


async def test_detect_reports_the_servers_that_answer(fake: FakeOpenAI) -> None:
    serve(fake, "llamacpp")
    down = f"http://127.0.0.1:{closed_port()}/v1"
    found = await detect_local([down, fake.base_url])
    assert [e.base_url for e in found.endpoints] == [fake.base_url]
    assert found.endpoints[0].preset == "llamacpp"
    assert found.message == f"Found llama.cpp at {fake.base_url} (1 model)."


async def test_detect_with_none_running_names_what_it_tried() -> None:
    down = [f"http://127.0.0.1:{closed_port()}/v1", f"http://127.0.0.1:{closed_port()}/v1"]
    found = await detect_local(down)
    assert found.endpoints == []
    assert found.message.startswith("No local model server answered. Tried ")
    assert all(url in found.message for url in down)
    assert "shiro.baseUrl" in found.message


async def test_detect_never_sends_the_environment_key(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-from-env")
    await detect_local([fake.base_url])
    assert all("sk-secret-from-env" not in str(r["headers"]) for r in fake.requests)


def test_which_models_take_images_is_read_where_each_server_says_it() -> None:
    assert ollama_model("llava:7b", None, {"capabilities": ["completion", "vision"]}).images is True
    assert ollama_model("qwen2.5-coder:1.5b", None, {"capabilities": ["completion", "tools"]}).images is False
    assert ollama_model("x", None, {}).images is None
    assert images_from_props({"modalities": {"vision": True, "audio": False}}) is True
    assert images_from_props({"modalities": {"vision": False}}) is False
    assert images_from_props({"default_generation_settings": {"n_ctx": 4096}}) is None
    assert images_from_entry({"architecture": {"input_modalities": ["text", "image"]}}) is True
    assert images_from_entry({"architecture": {"input_modalities": ["text"]}}) is False
    assert images_from_entry({"id": "gpt-5"}) is None
