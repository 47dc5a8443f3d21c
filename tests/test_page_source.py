"""The one parser of page sources (scripts/page_source.py), on short Markdown strings."""

from __future__ import annotations

import textwrap

import page_source
import pytest


def page(text: str) -> page_source.PageSource:
    return page_source.PageSource(textwrap.dedent(text).strip("\n"))


def test_include_block_and_its_targets():
    src = page(
        """
        Text.

        ``` py
        --8<-- "snippets/a/x.py:kernel"
        --8<-- "snippets/a/y.py"
        ```
        """
    )
    (fence,) = src.fences
    assert fence.language == "py"
    assert fence.include_targets == ["snippets/a/x.py:kernel", "snippets/a/y.py"]
    assert fence.snippet_files == ["snippets/a/x.py", "snippets/a/y.py"]
    assert src.hand_typed_fences() == []


def test_four_backtick_fence_holds_a_three_backtick_one():
    src = page(
        """
        ````markdown
        ``` py
        print("shown as text")
        ```
        ````

        ``` py
        --8<-- "snippets/a/x.py"
        ```
        """
    )
    fences = src.fences
    assert [f.marker for f in fences] == ["````", "```"]
    assert fences[0].body[1] == 'print("shown as text")'
    assert src.snippet_files == ["snippets/a/x.py"]
    assert src.hand_typed_fences() == [fences[0]]


def test_block_inside_an_admonition_keeps_its_indent():
    src = page(
        """
        !!! example "Inside"

            ``` py
            --8<-- "snippets/a/x.py:run"
            ```

            1.  An annotation inside the admonition.
                Its continuation line.
            2.  Second.

        After.
        """
    )
    (fence,) = src.fences
    assert fence.indent == "    "
    assert fence.snippet_files == ["snippets/a/x.py"]
    lines = src.lines
    end = page_source.annotation_list_end(lines, fence.end + 1, fence.indent)
    assert lines[end - 1].strip() == "2.  Second."
    assert page_source.annotation_items(lines, fence) == [
        "An annotation inside the admonition. Its continuation line.",
        "Second.",
    ]


def test_annotation_items_with_continuation_and_blank_lines():
    src = page(
        """
        ``` py
        --8<-- "snippets/a/x.py"
        ```

        1.  First item,
            continued here.

        2.  Second item.

        A paragraph after the list.
        """
    )
    (fence,) = src.fences
    assert page_source.annotation_items(src.lines, fence) == [
        "First item, continued here.",
        "Second item.",
    ]


def test_no_annotation_list_after_a_fence():
    src = page(
        """
        ``` py
        --8<-- "snippets/a/x.py"
        ```

        Just text.
        """
    )
    (fence,) = src.fences
    assert page_source.annotation_list_end(src.lines, fence.end + 1, fence.indent) == fence.end + 1


@pytest.mark.parametrize("info", ["py3", "python", "pycon", "{.python}", "bash", "", "text"])
def test_any_block_that_is_not_an_include_is_hand_typed(info):
    src = page(f"```{info}\nx = 1\n```")
    assert src.hand_typed_fences() == src.fences


def test_include_of_a_file_outside_snippets_is_hand_typed():
    src = page('``` py\n--8<-- "docs/other.py"\n```')
    assert src.hand_typed_fences() == src.fences


def test_tilde_fence_and_language_with_options():
    src = page('~~~ py title="x.py" linenums="1"\n--8<-- "snippets/a/x.py"\n~~~')
    (fence,) = src.fences
    assert (fence.marker, fence.language) == ("~~~", "py")


def test_unclosed_fence_is_an_error():
    with pytest.raises(page_source.PageSourceError, match="never closed"):
        _ = page("``` py\nx = 1\n").fences


def test_tokens_and_their_arguments():
    src = page(
        """
        Took {{ figure("snippets/a/x.py", "ms") }}, printed
        {{ output("snippets/a/x.py", "n=10:") }}. {{ lock_summary }}
        """
    )
    assert [(t.name, t.args, t.line) for t in src.tokens] == [
        ("figure", ("snippets/a/x.py", "ms"), 0),
        ("output", ("snippets/a/x.py", "n=10:"), 1),
        ("lock_summary", (), 1),
    ]


def test_measured_spans():
    src = page(
        """
        {{ measured }}A {{ holds("x.py", "a < b") }}
        and {{ figure("x.py", "ms") }}.{{ end_measured }} {{ figure("x.py", "ms") }}
        {{ measured }}{{ since_last_run("x.py", "*", "w") }}{{ end_measured }}
        """
    )
    assert [(t.name, t.span) for t in src.tokens] == [
        ("measured", None),
        ("holds", 0),
        ("figure", 0),
        ("end_measured", None),
        ("figure", None),
        ("measured", None),
        ("since_last_run", 1),
        ("end_measured", None),
    ]
    body = page_source.MEASURED_SPAN.findall(src.text)
    assert body == [
        'A {{ holds("x.py", "a < b") }}\nand {{ figure("x.py", "ms") }}.',
        '{{ since_last_run("x.py", "*", "w") }}',
    ]
    for text, error in (
        ("{{ measured }} a {{ measured }} b {{ end_measured }}", "inside the span of line 1"),
        ("a {{ end_measured }}", "without"),
        ("a\n{{ measured }} b", "line 2: .* is never closed"),
    ):
        with pytest.raises(page_source.PageSourceError, match=error):
            _ = page(text).tokens


def test_token_arguments_must_be_json():
    with pytest.raises(page_source.PageSourceError, match="JSON"):
        _ = page("{{ figure(snippets/x.py, ms) }}").tokens
