"""The coverage ratchet: every declared family is in every test matrix, or listed here as not
applicable with the reason.

A family is declared once (``lmparse.families``); the matrices are the test modules that
drive every family through the same checks.  Each matrix below says how to read what it
runs and whether that covers a family: a wire matrix covers a family when one of its wires
runs the family's tool dialect class and one runs its reasoning parser class (a family
without reasoning markers needs only the first).  A family that leaves a matrix (a wire list
rebuilt without it, a hard-coded parameter list that forgets it) fails here, by name, until
it is put back or listed in ``NOT_APPLICABLE`` with a reason; a listed family that becomes
covered fails too (the entry is stale), so the list only shrinks by intent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from lmparse import ReasoningParserManager, ToolParserManager
from lmparse.families import FAMILIES, Family
from lmparse.integrations import plugin_names

from . import test_constrain, test_contract, test_fuzz_all_parsers, test_robustness_rules, test_truncated
from .support.wires import Wire

HARMONY = "Harmony (gpt-oss) is a response grammar with no tool dialect or reasoning tags"
NO_TEMPLATE = "no chat template of the family is in the test data"
BEAM = ("beam has no fixed wire: its parser is compiled from a checkpoint's response_template, and no "
        "Beam checkpoint is public")

NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("contract", "gpt-oss"): f"{HARMONY}: tests/test_harmony.py runs the contract's cases over its framing",
    ("robustness rules", "gpt-oss"): f"{HARMONY}: tests/test_harmony_framing.py checks every framing transition",
    ("truncation", "gpt-oss"): f"{HARMONY}: tests/test_harmony.py cuts replies inside headers and bodies",
    ("conservation fuzzing", "gpt-oss"): f"{HARMONY}: test_fuzz_all_parsers.py::test_mutated_harmony_text fuzzes it",
    ("constraint compilation", "gpt-oss"): f"{HARMONY}: its structural tag is compiled by "
                                           "tests/test_constrain_xgrammar.py::test_gpt_oss_harmony_call_after_its_analysis",
    ("contract", "beam"): f"{BEAM}; tests/test_beam.py runs vLLM's response_template cases on Beam-style metadata",
    ("robustness rules", "beam"): f"{BEAM}; tests/test_beam.py and test_response_template.py cover its router rules",
    ("truncation", "beam"): f"{BEAM}; tests/test_beam.py cuts calls before their closer",
    ("template round trip", "beam"): f"{BEAM} (and so no chat template)",
    ("conservation fuzzing", "beam"): f"{BEAM}; tests/test_response_template_fuzz.py fuzzes the template parser",
    ("constraint compilation", "beam"): f"{BEAM}; lmparse compiles no grammar from a response_template (vLLM's "
                                        "Beam structural tag is not implemented)",
    **{("template round trip", name): NO_TEMPLATE
       for name in ("pythonic", "internlm", "intern-s1", "deepseek-v3", "seed-oss", "deepseek-v41", "glm5", "hy-v4",
                    "gigachat35", "zaya", "granite4.2", "step5", "ripple", "dots", "iquest", "iquest-coder-v2",
                    "sarashina", "k2-horizon", "inkling")},
}


def _wire_classes(wires: Iterable[Wire]) -> tuple[set[type], set[type]]:
    wires = list(wires)
    return ({ToolParserManager.get(w.tool_parser) for w in wires},
            {ReasoningParserManager.get(w.reasoning_parser) for w in wires if w.reasoning_parser})


def _runs_parsers(tools: set[type], reasonings: set[type]) -> Callable[[Family], bool]:
    def covers(family: Family) -> bool:
        return (family.tool is not None and family.tool.cls in tools
                and (family.reasoning is None or family.reasoning.cls in reasonings))
    return covers


def wire_matrix(wires: Iterable[Wire]) -> Callable[[Family], bool]:
    return _runs_parsers(*_wire_classes(wires))


def named_matrix(tool_names: Iterable[str], reasoning_names: Iterable[str] = ()) -> Callable[[Family], bool]:
    """A matrix parametrized by registry names (classes compared, so an alias counts)."""
    return _runs_parsers({ToolParserManager.get(n) for n in tool_names},
                         {ReasoningParserManager.get(n) for n in reasoning_names} | {None})


def template_matrix(pairs: Iterable[tuple[str, str | None]]) -> Callable[[Family], bool]:
    """Covers a family when every template it declares is rendered and parsed back."""
    run = set(pairs)
    return lambda family: bool(family.verified_templates) and all((family.name, t) in run
                                                                 for t in family.verified_templates)


def plugin_matrix() -> Callable[[Family], bool]:
    names = plugin_names()

    def covers(family: Family) -> bool:
        wanted = [(names.tool, family.tool, family.tool_names), (names.reasoning, family.reasoning,
                                                                 family.reasoning_names)]
        framed = family.response is None or not family.response.cls.frames_reply or family.response.name in names.framed
        return framed and all(p is None or {p.name, *aliases} <= set(offered) for offered, p, aliases in wanted)
    return covers


def _template_pairs() -> list[tuple[str, str | None]]:
    # Imported here: the serve tests need the serve extra (skipped without it, as they are).
    pytest.importorskip("starlette")
    from . import test_serve_families

    return list(test_serve_families.TEMPLATE_PAIRS)


def matrices() -> dict[str, Callable[[Family], bool]]:
    return {
        "contract": wire_matrix(test_contract.ALL_WIRES),
        "robustness rules": wire_matrix(test_robustness_rules.ALL_WIRES),
        "truncation": wire_matrix(test_truncated.WIRES),
        "template round trip": template_matrix(_template_pairs()),
        "conservation fuzzing": named_matrix(test_fuzz_all_parsers.DIALECTS, test_fuzz_all_parsers.REASONERS),
        "constraint compilation": named_matrix(test_constrain.DIALECTS, ReasoningParserManager.names()),
        "plugin registration": plugin_matrix(),
    }


def gaps(found: dict[str, Callable[[Family], bool]], families: Iterable[Family] = FAMILIES,
         not_applicable: dict[tuple[str, str], Any] = NOT_APPLICABLE) -> list[str]:
    """Every (matrix, family) that is neither covered nor listed, and every stale listing."""
    out = []
    for matrix, covers in found.items():
        for family in families:
            listed = (matrix, family.name) in not_applicable
            if covers(family) and listed:
                out.append(f"{family.name} is in the {matrix} matrix now: drop its NOT_APPLICABLE entry")
            elif not covers(family) and not listed:
                out.append(f"{family.name} is missing from the {matrix} matrix")
    return out


def test_every_family_is_in_every_matrix_or_listed_with_a_reason():
    assert gaps(matrices()) == []


def test_not_applicable_names_real_matrices_and_families():
    known = {f.name for f in FAMILIES}
    assert {m for m, _ in NOT_APPLICABLE} <= set(matrices())
    assert {name for _, name in NOT_APPLICABLE} <= known
    assert all(reason.strip() for reason in NOT_APPLICABLE.values())


@pytest.mark.parametrize("matrix", ["contract", "robustness rules", "truncation"])
def test_a_family_dropped_from_a_wire_matrix_is_named(matrix):
    """The failure the ratchet exists for: a wire list rebuilt without a family."""
    source = {"contract": test_contract.ALL_WIRES, "robustness rules": test_robustness_rules.ALL_WIRES,
              "truncation": test_truncated.WIRES}[matrix]
    kimi_k3 = ToolParserManager.get("kimi-k3")
    without = [w for w in source if ToolParserManager.get(w.tool_parser) is not kimi_k3]
    assert gaps({matrix: wire_matrix(without)}) == [f"kimi-k3 is missing from the {matrix} matrix"]


def test_a_new_family_without_a_wire_is_named():
    from lmparse.families import Parser

    class NewDialect:  # registered nowhere: no matrix can run it
        pass

    newcomer = Family("newcomer", "a family nobody added to the matrices", tool=Parser("newcomer", NewDialect))
    found = gaps(matrices(), families=[*FAMILIES, newcomer])
    assert sorted(found) == sorted(f"newcomer is missing from the {m} matrix" for m in matrices())


def test_a_stale_listing_is_named():
    stale = {**NOT_APPLICABLE, ("contract", "qwen3"): "no longer true"}
    assert gaps({"contract": wire_matrix(test_contract.ALL_WIRES)}, not_applicable=stale) == [
        "qwen3 is in the contract matrix now: drop its NOT_APPLICABLE entry"]
