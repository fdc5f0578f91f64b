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
]


def serve(fake: FakeOpenAI, name: str) -> FakeOpenAI:
    """Make ``fake`` list its models like the local server ``name``."""
    if name == "llamacpp":
        fake.models, fake.get_routes = list(LLAMACPP_MODELS), {"/props": LLAMACPP_PROPS}
    elif name == "vllm":
        fake.models = list(VLLM_MODELS)
    elif name == "lmstudio":
        fake.models, fake.get_routes = list(LMSTUDIO_MODELS), {"/api/v0/models": LMSTUDIO_V0}
    elif name == "ollama":
        fake.models = list(OLLAMA_MODELS)
    else:
        raise ValueError(f"no such local server: {name}")
    return fake
