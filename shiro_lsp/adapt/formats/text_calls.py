"""Tool calls a model wrote as text instead of native ``tool_calls``.

Small and mid-size local models, when their chat template's tool format is not followed, answer
with the call itself as their whole message::

    {"name": "read_file", "arguments": {"path": "notes.txt"}}
    ```json
    {"name": "read_file", "arguments": {"path": "notes.txt"}}
    ```
    <tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>
    <tools>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tools>
    <tools><tool name="read_file"><path>notes.txt</path></tool></tools>
    [{"name": ...}, {"name": ...}]

(``<tools>`` is the tag the chat template lists the tools in: Qwen2.5-Coder on llama.cpp's stock
template wraps its calls in it, as JSON or as one element per argument.)

``parse_text_tool_calls`` recognises those and nothing else: the WHOLE message must be calls, every
name must be a tool offered this step, and every input must pass that tool's schema, or at least
name exactly its fields (then the tool's own check tells the model which value is wrong). Prose, a
code block among prose, JSON whose shape is anything else, or an unknown tool name stays text. A
call to a tool Shiro has but did not offer this step (``unoffered``: a small window offers few) is
read as a call, marked ``offered=False``: it never runs, its result is an error naming what to use.

``TextHold`` decides while the text streams: text that cannot be a call goes out at once; text that
may still become one is held back until the step ends, so the user never sees a call as an answer.

``toolCallFormat: text`` is for models and servers with no native tool calling at all (an Ollama model
without a tool template, llama-server without ``--jinja``, vLLM without a tool parser): no ``tools``
are sent; ``tools_prompt`` describes them in the system prompt in the Hermes/Qwen ``<tool_call>``
convention, ``as_text_protocol`` writes earlier calls and results back as text, and a reply may be
prose followed by ``<tool_call>`` blocks (``split_tagged_calls``).

Where text is parsed at all, and how far a text call is trusted (issue 20):

- **Only where text calls are the turn's protocol.** ``text``: always. ``auto``: only until the model
  makes a native call; from then on, for the rest of the turn and for that endpoint and model for the
  rest of the server's life, a reply is text (the engine and runtime keep that state). ``native``: never.
  With llama.cpp's stock template, Qwen2.5-Coder never makes a native call, so ``auto`` keeps parsing.
- **Never an example.** Prose around a whole-message call makes it text; in the text format, prose may
  come before ``<tool_call>`` blocks, unless that prose introduces them as an example
  (``presents_example``: "here is an example", "for instance", "e.g.", "would look like").
- **Never an echo.** A call that reproduces text the model was shown (a file it read, a command's
  output, the workspace view, an attached document, an instructions file) is that text echoed, not a
  call: never run, whatever ``--yolo`` says (``echoes.py``, the one rule for every reader here).
- **Never more trusted than a native call.** It carries ``origin="text"``: it rides only "Always"
  grants made for text calls, and the approval card and ``tool-call`` event say where it came from.
- **Results cannot close their block.** ``as_text_protocol`` neutralises the protocol's tags
  (``<tool_response>``, ``<tool_call>``, ``<tools>``) and ChatML-style special tokens in tool output
  as ``&lt;...``, which the model still reads as the characters they stand for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from shiro_lsp.adapt.formats.base import WRITTEN_AS_KEY, ParsedReply, ReplyContext, ReplyFormat, TextCall
from shiro_lsp.adapt.formats.echoes import Shown, echoes
from shiro_lsp.bounded import NOT_PARSED, json_value, raw_json_value
from shiro_lsp.config import ToolCallFormat
from shiro_lsp.errors import ToolError
from shiro_lsp.messages import Message, Part
from shiro_lsp.providers.wire import parts_of, tool_output_text
from shiro_lsp.tools.base import ToolSpec, validate_input

TOOL_CALL_TAG = "<tool_call>"
RESULT_TAG = "<tool_response>"
TEXT_ORIGIN_NOTE = (
    "Read from the model's text: the model wrote this call in its reply, it did not make a native "
    "tool call. Deny it if you did not ask for it."
)

CALL_KEYS = frozenset({"name", "arguments", "parameters", "id", "type", "function"})
_FENCE = re.compile(
    r"^```[ \t]*(?:json|tool_call|tool_code|javascript|js)?[ \t]*\n(?P<body>.*?)\n?```$", re.S
)
_FENCE_OPEN = re.compile(r"^```[ \t]*(?:json|tool_call|tool_code|javascript|js)?[ \t]*\n")
_WRAPPER = re.compile(r"<(?P<tag>tool_call|tools)>\s*(?P<body>.*?)\s*(?:</(?P=tag)>|$)", re.S)
_XML_TOOL = re.compile(r'<tool\s+name\s*=\s*"(?P<name>[\w.-]+)"\s*>(?P<body>.*?)</tool>', re.S)
_XML_ARGUMENT = re.compile(r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", re.S)
# What a call can start like: an optional fence or wrapper tag, then `{` or `[{` and a call key, or
# a `<tool name=` element.
_MAY_BE_CALL = re.compile(
    r"^(?:```[ \t]*[a-z_]*[ \t]*\n\s*|<(?:tool_call|tools)>\s*)?"
    r'(?:\[?\s*\{\s*"(?:name|type|function)"\s*:|<tool\s+name\s*=)',
    re.S,
)
_DECIDE_AFTER = 64  # characters of a message after which a non-matching start is surely text


_EXAMPLE_CUE = re.compile(
    r"\b(?:for (?:example|instance)|e\.g\.|an? (?:example|sample)|examples?\s*:"
    r"|example (?:of|call|usage)|(?:would|could|might|will) look(?:s)? like|looks like this)",
    re.I,
)
_ACTION_CUE = re.compile(r"\b(?:let me|let's|I'll|I will|I'm going to|I am going to|now I)\b", re.I)


def presents_example(prose: str) -> bool:
    """Whether the prose's last paragraph introduces what follows as an example, not a call.

    "Here is an example of a bash call:" does; "Let me create an example config:" announces an
    action, as small models do before a real call, and does not."""
    last = re.split(r"\n\s*\n", prose.strip())[-1] if prose.strip() else ""
    return _EXAMPLE_CUE.search(last) is not None and _ACTION_CUE.search(last) is None


def parse_text_tool_calls(
    text: str, tools: Mapping[str, ToolSpec], unoffered: Mapping[str, ToolSpec] | None = None
) -> list[TextCall] | None:
    """The tool calls ``text`` consists of, or None when it is anything else."""
    stripped = text.strip()
    if not stripped or not tools:
        return None
    payloads = _payloads(stripped)
    if payloads is None:
        return None
    calls: list[TextCall] = []
    for value in payloads:
        for item in value if isinstance(value, list) else [value]:
            call = (
                _call_of(item, tools)
                or _call_of(item, unoffered or {}, offered=False)
                or _write_shaped(item, tools)
            )
            if call is None:
                return None
            calls.append(call)
    return calls or None


def _payloads(text: str) -> list[Any] | None:
    """The decoded values ``text`` wraps (a wrapper tag, a fence, or none), or None."""
    if text.startswith(("<tool_call>", "<tools>")):
        bodies = [m.group("body") for m in _WRAPPER.finditer(text)]
        leftover = _WRAPPER.sub("", text).strip()
        return _decoded(bodies) if bodies and not leftover else None
    fenced = _FENCE.match(text)
    if fenced:
        inner = fenced.group("body").strip()
        return (_decoded([inner]) if "```" not in inner else None) or _fenced_json(text)
    if text[0] in "[{":
        return _decoded([text])
    return None


def _fenced_json(text: str) -> list[Any] | None:
    """One fence holding one or more JSON values (a string value may hold a fence of its own)."""
    opening = _FENCE_OPEN.match(text)
    if opening is None:
        return None
    decoder, at = json.JSONDecoder(), opening.end()
    values: list[Any] = []
    while True:
        at = len(text) - len(text[at:].lstrip())
        if text.startswith("```", at):
            return values if values and not text[at + 3 :].strip() else None
        try:
            value, at = raw_json_value(decoder, text, at)
        except ValueError:
            return None
        values.append(value)


def _decoded(bodies: list[str]) -> list[Any] | None:
    values: list[Any] = []
    for body in bodies:
        value = _xml_calls(body) if body.startswith("<tool") else _json(body)
        if value is None:
            return None
        values.append(value)
    return values


def _json(body: str) -> Any:
    value = json_value(body)
    return None if value is NOT_PARSED else value


def _xml_calls(body: str) -> list[dict[str, Any]] | None:
    """``<tool name="bash"><command>ls</command></tool>``, one or more: calls with string arguments."""
    calls = [
        {"name": m.group("name"), "arguments": _xml_arguments(m.group("body"))}
        for m in _XML_TOOL.finditer(body)
    ]
    if not calls or _XML_TOOL.sub("", body).strip() or any(c["arguments"] is None for c in calls):
        return None
    return calls


def _xml_arguments(body: str) -> dict[str, str] | None:
    if _XML_ARGUMENT.sub("", body).strip():
        return None  # anything but argument elements: not a call
    return {m.group("key"): _element_text(m.group("value")) for m in _XML_ARGUMENT.finditer(body)}


def _element_text(value: str) -> str:
    """An element's text without the line breaks and indentation the model put around it."""
    if "\n" not in value.strip():
        return value.strip()
    return re.sub(r"\n[ \t]*$", "", re.sub(r"^[ \t]*\n", "", value))


def _call_of(item: Any, tools: Mapping[str, ToolSpec], *, offered: bool = True) -> TextCall | None:
    if not isinstance(item, dict) or not set(item) <= CALL_KEYS:
        return None
    if isinstance(item.get("function"), dict):  # OpenAI's own shape: {"type": "function", "function": {...}}
        item = item["function"]
        if not set(item) <= CALL_KEYS:
            return None
    elif isinstance(item.get("function"), str) and "name" not in item:  # the name under "function"
        item = {**item, "name": item["function"]}
    name = item.get("name")
    spec = tools.get(name) if isinstance(name, str) else None
    if spec is None:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = json_value(arguments) if arguments.strip() else {}
        if arguments is NOT_PARSED:
            return None
    fitting: TextCall | None = None
    for candidate in _candidates(arguments, spec):
        try:
            return TextCall(spec.name, validate_input(spec, candidate), offered)
        except ToolError:
            if fitting is None and _fits(spec, candidate):
                fitting = TextCall(spec.name, candidate, offered)
    # The right fields with a wrong value (offset 0) is still a call: the tool says what is wrong.
    return fitting


_PATH_ARGUMENTS = ("path", "file_path", "filePath", "filename", "file")
_FILE_NAME = re.compile(r"^[\w./-]*\w\.[A-Za-z0-9]{1,8}$")


def _write_shaped(item: Any, tools: Mapping[str, ToolSpec]) -> TextCall | None:
    """A call to a tool that does not exist whose arguments are a file's path and its whole content
    (``create_file``, or the file's own name as the tool: ``{"name": "deps.txt", "arguments":
    {"content": [...]}}``): a 1.5B model's way of writing a file, read as the ``write_file`` it means."""
    if "write_file" not in tools or not isinstance(item, dict) or not set(item) <= CALL_KEYS:
        return None
    name, arguments = item.get("name"), item.get("arguments", item.get("parameters"))
    if not isinstance(name, str) or name in tools or not isinstance(arguments, dict):
        return None
    content = arguments.get("content")
    if isinstance(content, list) and all(isinstance(line, str) for line in content):
        content = "".join(f"{line}\n" for line in content)
    paths = [arguments[key] for key in _PATH_ARGUMENTS if isinstance(arguments.get(key), str)]
    path = paths[0] if len(paths) == 1 else name if not paths and _FILE_NAME.match(name) else None
    if not isinstance(content, str) or path is None or set(arguments) - {"content", *_PATH_ARGUMENTS}:
        return None
    try:
        return TextCall("write_file", validate_input(tools["write_file"], {"path": path, "content": content}))
    except ToolError:
        return None


def _scalars_decoded(arguments: Any, spec: ToolSpec) -> Any:
    """String values that read as JSON numbers or booleans, decoded, except for string fields."""
    if not isinstance(arguments, dict):
        return arguments
    properties = spec.parameters.get("properties") or {}
    out = dict(arguments)
    for key, value in arguments.items():
        field = properties.get(key)
        if not isinstance(value, str) or (isinstance(field, dict) and field.get("type") == "string"):
            continue
        decoded = _json(value)
        if isinstance(decoded, (bool, int, float)):
            out[key] = decoded
    return out


def _fits(spec: ToolSpec, arguments: Any) -> bool:
    """The arguments name only the tool's fields and all its required ones (values unchecked)."""
    if not isinstance(arguments, dict):
        return False
    properties = spec.parameters.get("properties") or {}
    required = spec.parameters.get("required") or []
    return set(arguments) <= set(properties) and set(required) <= set(arguments)


def _candidates(arguments: Any, spec: ToolSpec) -> list[Any]:
    """The arguments, and the repairs small models need: a bare list for a tool's one array field;
    a number or boolean written as a string (every argument of the ``<tool>`` element form is one)."""
    candidates = [arguments]
    decoded = _scalars_decoded(arguments, spec)
    if decoded != arguments:
        candidates.insert(0, decoded)
    if isinstance(arguments, list):
        properties = spec.parameters.get("properties") or {}
        arrays = [k for k, v in properties.items() if isinstance(v, dict) and v.get("type") == "array"]
        required = spec.parameters.get("required") or []
        if len(arrays) == 1 and set(required) <= set(arrays):
            candidates.append({arrays[0]: arguments})
    return candidates


class TextHold:
    """Streams a step's text, holding it back while it may still turn out to be a tool call.

    ``tagged`` (the text format): after prose, everything from a ``<tool_call>`` tag on is held too.
    """

    def __init__(self, enabled: bool, *, tagged: bool = False) -> None:
        self.enabled = enabled
        self.tagged = tagged and enabled
        self.held = ""
        self.released = not enabled
        self._tail = ""  # tagged: the end of the prose that may be the start of a tag
        self._in_call = False

    def feed(self, delta: str) -> str:
        """What to show now."""
        if self.released:
            return self._after_prose(delta) if self.tagged else delta
        self.held += delta
        start = self.held.lstrip()
        if not start:
            return ""
        if may_be_call(start):
            return ""
        self.released = True
        text, self.held = self.held, ""
        return self._after_prose(text) if self.tagged else text

    def _after_prose(self, delta: str) -> str:
        if self._in_call:
            self.held += delta
            return ""
        text = self._tail + delta
        at = text.find(TOOL_CALL_TAG)
        if at >= 0:
            self._in_call, self._tail, self.held = True, "", text[at:]
            return text[:at]
        keep = _tag_prefix_length(text)
        self._tail = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def drop(self) -> None:
        """The held text was a tool call: it is never shown."""
        self.held = ""
        self._in_call = False

    def release(self) -> str:
        """Give up holding: everything held, to show now."""
        self.released = True
        out, self.held, self._tail, self._in_call = self._tail + self.held, "", "", False
        return out


def _tag_prefix_length(text: str) -> int:
    """How many characters at the end of ``text`` could begin a ``<tool_call>`` tag."""
    for size in range(min(len(TOOL_CALL_TAG) - 1, len(text)), 0, -1):
        if TOOL_CALL_TAG.startswith(text[-size:]):
            return size
    return 0


_OPENINGS = ('{"name":', '[{"name":', '{"type":', '{"function":', '[{"type":', '[{"function":')
_FENCED = tuple(
    f"```{lang}{opening}" for lang in ("", "json", "tool_call", "tool_code") for opening in _OPENINGS
)
_TAGGED = tuple(
    f"<{tag}>{opening}" for tag in ("tool_call", "tools") for opening in (*_OPENINGS, "<toolname=")
)
_PREFIXES = (*_TAGGED, *_FENCED, *_OPENINGS)


def may_be_call(start: str) -> bool:
    """Whether a message beginning with ``start`` (no leading blanks) can still be a tool call."""
    if _MAY_BE_CALL.match(start) or writes_a_result(start) or RESULT_TAG.startswith(start):
        return True
    if len(start) > _DECIDE_AFTER:
        return False
    compact = re.sub(r"\s+", "", start)
    return any(prefix.startswith(compact) for prefix in _PREFIXES)


def writes_a_result(text: str) -> bool:
    """A reply that starts as a tool result: the model invented one (it is never shown as an answer)."""
    return text.lstrip().startswith(RESULT_TAG)


def is_call_shaped(text: str) -> bool:
    """JSON that has the shape of a call (a name and its arguments), whatever the name."""
    value = _json(text.strip())
    return (
        isinstance(value, dict)
        and set(value) <= CALL_KEYS
        and bool({"name", "function"} & set(value))
        and bool({"arguments", "parameters"} & set(value))
    )


def text_call_notice(calls: list[TextCall]) -> str:
    names = ", ".join(dict.fromkeys(c.name for c in calls))
    plural = "s" if len(calls) != 1 else ""
    return f"The model wrote its tool call{plural} as text ({names}); Shiro read {'them' if plural else 'it'} from its reply."


def split_tagged_calls(text: str, tools: Mapping[str, ToolSpec]) -> tuple[str, list[TextCall]] | None:
    """The text format's reply: prose, then nothing but ``<tool_call>`` blocks (or None)."""
    at = text.find(TOOL_CALL_TAG)
    if at < 0 or presents_example(text[:at]):
        return None
    calls = parse_text_tool_calls(text[at:], tools)
    return (text[:at].rstrip(), calls) if calls else None


def tools_prompt(specs: list[ToolSpec]) -> str:
    """The system prompt's tool section for the text format (stable: the cached prefix stays valid)."""
    if not specs:
        return ""
    listing = "\n".join(
        json.dumps(
            {"name": s.name, "description": s.description, "parameters": s.parameters},
            ensure_ascii=False,
            sort_keys=True,
        )
        for s in specs
    )
    return (
        "\n\n# Tools\n\nYou call a tool by writing, at the end of your message, one block per call:\n"
        f'{TOOL_CALL_TAG}\n{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}\n</tool_call>\n'
        "Write nothing after the blocks. A block is a call that runs: to show one as an example, put it "
        "in a code block. Each result comes back in the next user message inside "
        "<tool_response> tags. The tools, with the JSON Schema of their arguments:\n"
        f"<tools>\n{listing}\n</tools>"
    )


def as_text_protocol(messages: list[Message]) -> list[Message]:
    """The history for a model with no native tool calls: calls and results written as text."""
    out: list[Message] = []
    shiro_ran: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant" and _made_by_shiro(message, shiro_ran):
            continue
        if role == "assistant" and _written_out(message):
            out.append(_as_written(message))
        elif role == "assistant":
            out.append(_assistant_as_text(message))
        elif role == "tool":
            _append_user(out, _results_as_text(parts_of(message), shiro_ran))
        elif role == "user" and isinstance(message.get("content"), str):
            _append_user(out, str(message["content"]))
        else:
            out.append(message)
    return out


def as_written(messages: list[Message]) -> list[Message]:
    """The history with each reply whose files Shiro wrote from its listings as the model wrote it,
    and the writes' results as the next user message: the server's cache still holds that reply
    (a rewrite as calls broke it where the first file began), and a file's content rides once."""
    out: list[Message] = []
    state = ""  # "reply": after a written-out reply or Shiro's own call; "results": after its results, as user text
    shiro_ran: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant" and _made_by_shiro(message, shiro_ran):
            state = "reply"
        elif role == "assistant" and _written_out(message):
            out.append(_as_written(message))
            state = "reply"
        elif role == "tool" and state:
            _append_user(out, _results_as_text(parts_of(message), shiro_ran))
            state = "results"
        elif role == "user" and state == "results" and isinstance(message.get("content"), str):
            _append_user(out, str(message["content"]))  # strict templates want turns to alternate
        else:
            out.append(message)
            state = ""
    return out


def _written_out(message: Message) -> bool:
    """A reply whose files Shiro wrote, with its calls still there (pruning keeps its text short)."""
    return isinstance(message.get(WRITTEN_AS_KEY), str) and any(
        p.get("type") == "tool-call" for p in parts_of(message)
    )


def _as_written(message: Message) -> Message:
    return {"role": "assistant", "content": [{"type": "text", "text": message[WRITTEN_AS_KEY]}]}


def _assistant_as_text(message: Message) -> Message:
    kept: list[Part] = []
    texts: list[str] = []
    for part in parts_of(message):
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") == "tool-call":
            call = {"name": part.get("toolName"), "arguments": part.get("input") or {}}
            # `\u003c` is `<` to any JSON reader: an argument cannot close the block it is written in.
            body = _PROTOCOL_MARKUP.sub(r"\\u003c", json.dumps(call, ensure_ascii=False))
            texts.append(f"{TOOL_CALL_TAG}\n{body}\n</tool_call>")
        else:
            kept.append(part)
    text = "\n".join(t for t in texts if t)
    return {**message, "content": [*kept, {"type": "text", "text": text}] if text else kept}


def _made_by_shiro(message: Message, shiro_ran: dict[str, str]) -> bool:
    """A message holding only calls Shiro made itself (a check it runs for a model that cannot):
    never sent as the model's words. Their commands go to ``shiro_ran``, by call id."""
    parts = parts_of(message)
    calls = [p for p in parts if p.get("type") == "tool-call"]
    if not calls or len(calls) != len(parts) or not all(map(_by_shiro, calls)):
        return False
    for call in calls:
        given = call.get("input")
        command = given.get("command") if isinstance(given, dict) else None
        shiro_ran[str(call.get("toolCallId"))] = str(command or call.get("toolName", ""))
    return True


def _by_shiro(part: Part) -> bool:
    options = part.get("providerOptions")
    shiro = options.get("shiro") if isinstance(options, dict) else None
    return isinstance(shiro, dict) and shiro.get("byShiro") is True


def _results_as_text(parts: list[Part], shiro_ran: Mapping[str, str]) -> str:
    """Results as user text: a call's in its ``<tool_response>``, one Shiro made as what Shiro ran."""
    return "\n".join(
        f"Shiro ran `{shiro_ran[str(p.get('toolCallId'))]}`:\n{neutralise_tags(tool_output_text(p))}"
        if str(p.get("toolCallId")) in shiro_ran
        else f'<tool_response name="{p.get("toolName", "")}">\n'
        f"{neutralise_tags(tool_output_text(p))}\n</tool_response>"
        for p in parts
        if p.get("type") in ("tool-result", "tool-error")
    )


# The `<` of anything that could open or close a block of the text protocol, or a chat template's
# special token (`<|im_end|>`): a tool's output is data and must stay inside its <tool_response>.
_PROTOCOL_MARKUP = re.compile(r"<(?=\s*/?\s*(?:tool_response|tool_call|tools?)\b|\|)", re.I)


def neutralise_tags(text: str) -> str:
    """``text`` with every protocol tag written as ``&lt;tag>``: read alike, parsed as nothing."""
    return _PROTOCOL_MARKUP.sub("&lt;", text)


def _append_user(out: list[Message], text: str) -> None:
    """One user message for results and the text after them: strict templates want turns to alternate."""
    if out and out[-1].get("role") == "user" and isinstance(out[-1].get("content"), str):
        out[-1] = {**out[-1], "content": f"{out[-1]['content']}\n\n{text}"}
    else:
        out.append({"role": "user", "content": text})


class TextCalls(ReplyFormat):
    """Calls written as text, read where text calls are the turn's protocol (the module docstring).

    ``tagged`` (``toolCallFormat: text``): no ``tools`` are sent, the system prompt describes them,
    and a reply may be prose followed by ``<tool_call>`` blocks. Untagged (``auto``): the tools are
    sent as ``tools`` and a reply that is wholly calls is read, until the model makes a native call
    (then ``native`` is the format for the rest of the turn).
    """

    def __init__(self, *, tagged: bool, native: ReplyFormat) -> None:
        self.tagged = tagged
        self.name: ToolCallFormat = "text" if tagged else "auto"
        self.tools_in_prompt = tagged
        self._native = native

    def hold(self) -> TextHold:
        return TextHold(enabled=True, tagged=self.tagged)

    async def parse(self, text: str, context: ReplyContext) -> ParsedReply | None:
        return self.read_calls(text, context)

    def read_calls(self, text: str, context: ReplyContext) -> ParsedReply | None:
        """The calls ``text`` is (untagged), or the prose and the ``<tool_call>`` blocks after it."""
        prose, calls = "", parse_text_tool_calls(text, context.tools, context.unoffered)
        if not calls and self.tagged:
            prose, calls = split_tagged_calls(text, context.tools) or ("", None)
        if not calls:
            return None
        if echoes(text, calls, [], Shown.of(context.history, context.instructions)):
            return ParsedReply(declined=True)  # shown text echoed: never run, --yolo or not
        # the text format asked for calls as text: nothing to tell
        return ParsedReply(calls, prose, "" if self.tagged else text_call_notice(calls))

    def render(self, messages: list[Message]) -> list[Message]:
        return as_text_protocol(messages) if self.tagged else as_written(messages)

    def after_native_call(self) -> ReplyFormat:
        return self if self.tagged else self._native

    def when_tools_refused(self) -> ReplyFormat | None:
        return None if self.tagged else TextCalls(tagged=True, native=self._native)
