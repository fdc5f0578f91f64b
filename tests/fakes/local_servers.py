"""What local model servers answer besides chat: their /v1/models entries and metadata routes.

Shapes as llama.cpp's llama-server, vLLM, LM Studio and Ollama send them; ``serve(fake, NAME)``
makes the scripted server answer like that one.
"""

from __future__ import annotations

from typing import Any

from fakes.fake_openai import FakeOpenAI

LLAMACPP_MODEL = "qwen2.5-coder-1.5b-instruct"
LLAMACPP_CTX = 8192

LLAMACPP_MODELS: list[str | dict[str, Any]] = [
    {
        "id": LLAMACPP_MODEL,
        "object": "model",
        "created": 1764576000,
        "owned_by": "llamacpp",
        "meta": {
            "vocab_type": 2,
            "n_vocab": 151936,
            "n_ctx_train": 32768,
            "n_embd": 1536,
            "n_params": 1543714304,
            "size": 1066463232,
        },
    }
]
LLAMACPP_PROPS: dict[str, Any] = {
    "default_generation_settings": {"n_ctx": LLAMACPP_CTX, "params": {"n_predict": -1, "temperature": 0.8}},
    "total_slots": 1,
    "model_path": "/home/user/.cache/shiro-realmodel/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "chat_template": "{%- if tools %}...",
    "build_info": "b7000-0000000",
}
VLLM_MODELS: list[str | dict[str, Any]] = [
    {
        "id": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "object": "model",
        "created": 1764576000,
        "owned_by": "vllm",
        "root": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "parent": None,
        "max_model_len": 32768,
    }
]
LMSTUDIO_MODELS: list[str | dict[str, Any]] = [
    {"id": "qwen2.5-coder-7b-instruct", "object": "model", "owned_by": "organization_owner"},
    {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"},
]
LMSTUDIO_V0: dict[str, Any] = {
    "object": "list",
    "data": [
        {
            "id": "qwen2.5-coder-7b-instruct",
            "object": "model",
            "type": "llm",
            "state": "loaded",
            "max_context_length": 32768,
            "loaded_context_length": 4096,
        },
        {
            "id": "text-embedding-nomic-embed-text-v1.5",
            "object": "model",
            "type": "embeddings",
            "state": "not-loaded",
            "max_context_length": 2048,
        },
    ],
}
OLLAMA_MODELS: list[str | dict[str, Any]] = [
    {"id": "qwen2.5-coder:1.5b", "object": "model", "created": 1764576000, "owned_by": "library"},
    {"id": "llama3.2:latest", "object": "model", "created": 1764576000, "owned_by": "library"},
    {"id": "gemma3:1b", "object": "model", "created": 1764576000, "owned_by": "library"},
]
OLLAMA_NO_TOOLS_MODEL = "gemma3:1b"
# POST /api/show as Ollama answers it (trimmed: modelfile, template, license and tensors left out).
OLLAMA_SHOW: dict[str, dict[str, Any]] = {
    "qwen2.5-coder:1.5b": {  # no num_ctx: Ollama's default window
        "parameters": 'stop                           "<|im_start|>"\nstop                           "<|im_end|>"',
        "details": {"format": "gguf", "family": "qwen2", "parameter_size": "1.5B"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        "capabilities": ["completion", "tools", "insert"],
    },
    "llama3.2:latest": {  # loaded (see /api/ps) with a bigger window than the default
        "parameters": 'stop                           "<|start_header_id|>"',
        "details": {"format": "gguf", "family": "llama", "parameter_size": "3.2B"},
        "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
        "capabilities": ["completion", "tools"],
    },
    "gemma3:1b": {  # a Modelfile that sets num_ctx; its template has no tool calling
        "parameters": "num_ctx                        8192\ntop_k                          64\ntop_p                          0.95",
        "details": {"format": "gguf", "family": "gemma3", "parameter_size": "999.89M"},
        "model_info": {"general.architecture": "gemma3", "gemma3.context_length": 32768},
        "capabilities": ["completion"],
    },
}
OLLAMA_PS: dict[str, Any] = {
    "models": [
        {
            "name": "llama3.2:latest",
            "model": "llama3.2:latest",
            "size": 3338801804,
            "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
            "expires_at": "2026-12-01T15:04:05.000000+00:00",
            "size_vram": 3338801804,
            "context_length": 16384,
        }
    ]
}


def _ollama_show(body: dict[str, Any]) -> tuple[int, Any]:
    model = str(body.get("model") or body.get("name") or "")
    if model in OLLAMA_SHOW:
        return 200, OLLAMA_SHOW[model]
    return 404, {"error": f"model '{model}' not found"}


def serve(fake: FakeOpenAI, name: str) -> FakeOpenAI:
    """Make ``fake`` list its models like the local server ``name``."""
    if name == "llamacpp":
        fake.models, fake.get_routes = list(LLAMACPP_MODELS), {"/props": LLAMACPP_PROPS}
    elif name == "vllm":
        fake.models = list(VLLM_MODELS)
    elif name == "lmstudio":
        fake.models, fake.get_routes = list(LMSTUDIO_MODELS), {"/api/v0/models": LMSTUDIO_V0}
    elif name == "ollama":
        fake.models, fake.get_routes = list(OLLAMA_MODELS), {"/api/ps": OLLAMA_PS}
        fake.post_routes = {"/api/show": _ollama_show}
        fake.no_native_tools = {OLLAMA_NO_TOOLS_MODEL}
    else:
        raise ValueError(f"no such local server: {name}")
    return fake
