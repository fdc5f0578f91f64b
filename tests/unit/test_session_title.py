"""A session's title is the user's first words, never the documents attached to them."""

from shiro_lsp.messages import title_of


def test_the_title_leaves_attached_documents_out() -> None:
    prompt = 'Tell me about a cheerful animal\n\n<context label="hello.py">\nprint("hi")\n</context>'
    assert title_of([{"role": "user", "content": prompt}]) == "Tell me about a cheerful animal"


def test_a_prompt_that_is_only_a_document_keeps_it_as_its_title() -> None:
    only = '<context label="notes.md">\nremember the milk\n</context>'
    assert title_of([{"role": "user", "content": only}]) == only
