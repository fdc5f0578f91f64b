"""The probe sends a request a run recorded again, as often as asked, and scores each reply's written-out
files with the task's own checks (a scripted model on 127.0.0.1 stands in for the real one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval import sets, splits
from eval.probe import main, probe, prompt_of, rescore, run_name
from fakes import fixtures
from fakes.fake_openai import FakeOpenAI, Step, Text

fake = fixtures.fake  # the scripted model on 127.0.0.1, as a fixture of this module

TASK = "fix-average-bug"
FIXED = "def average(numbers):\n    return sum(numbers) / len(numbers)\n\n\ndef largest(numbers):\n    return max(numbers)\n"
STILL_WRONG = FIXED.replace("/ len(numbers)", "/ (len(numbers) - 1)")


def listing(content: str) -> str:
    return f"stats.py\n```python\n{content}```\n\nThe average divides by the count now."


def sse(text: str) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})


def recorded_run(root: Path, task: str, reply: str = "", folder: str = "") -> Path:
    """A run's log folder whose wire log holds two requests (the turn's first, then a send-back),
    the first answered with ``reply``."""
    run_dir = root / (folder or f"{task}.1")
    run_dir.mkdir(parents=True)
    first = {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
        "messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": "Fix the average."}],
    }
    second = first | {"messages": [*first["messages"], {"role": "user", "content": "Write it out now."}]}
    call = {"dir": "req", "method": "POST", "path": "/v1/chat/completions"}  # as the eval's proxy records
    lines = [
        {"n": 1, "dir": "req", "method": "GET", "path": "/v1/models", "body": None},
        call | {"n": 2, "body": first},
        {"n": 2, "dir": "line", "text": sse(reply) if reply else "data: {}"},
        call | {"n": 3, "body": second},
    ]
    (run_dir / "wire.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run_dir


def test_each_sample_is_the_recorded_request_at_its_seed_and_is_scored_by_the_tasks_checks(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.script += [Step(Text(listing(FIXED))), Step(Text(listing(STILL_WRONG))), Step(Text("No change."))]
    samples = probe(
        recorded_run(tmp_path, TASK), index=-1, samples=3, temperature=0.7, max_tokens=500, url=fake.base_url
    )
    assert [s.passed for s in samples] == [True, False, False]
    assert samples[0].written == ["stats.py"] and samples[2].written == []
    assert samples[2].why == "no file changed"
    sent = fake.bodies("/chat/completions")
    assert [b["seed"] for b in sent] == [0, 1, 2]
    assert all(b["stream"] is False and b["temperature"] == 0.7 and b["max_tokens"] == 500 for b in sent)
    assert all("stream_options" not in b for b in sent)
    assert sent[0]["messages"][-1]["content"] == "Write it out now."  # request -1: the last one


def test_without_samples_the_requests_are_listed_and_nothing_is_sent(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(recorded_run(tmp_path, TASK))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "0: 2 messages, last user: Fix the average.",
        "1: 3 messages, last user: Write it out now.",
    ]
    assert fake.requests == []


def test_a_held_out_task_is_refused_unless_the_probe_only_reports(fake: FakeOpenAI, tmp_path: Path) -> None:
    held_out = splits.load()["sets"]["own"]["heldout"][0]
    run_dir = recorded_run(tmp_path, held_out)
    with pytest.raises(SystemExit, match="held out"):
        probe(run_dir, url=fake.base_url)
    assert fake.requests == []
    fake.script.append(Step(Text("I cannot tell.")))
    assert len(probe(run_dir, url=fake.base_url, report_only=True)) == 1


def test_a_request_the_run_never_made_is_a_clear_error(fake: FakeOpenAI, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="made 2 requests; there is no request 5"):
        probe(recorded_run(tmp_path, TASK), index=5, url=fake.base_url)


def test_recorded_replies_are_scored_as_read_today_and_no_model_is_asked(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "20261201T000000Z" / "shiro"
    recorded_run(runs, TASK, listing(FIXED))
    recorded_run(runs, TASK, listing(STILL_WRONG), folder=f"{TASK}.2")
    held_out = splits.load()["sets"]["own"]["heldout"][0]
    recorded_run(runs, held_out, "I cannot tell.")
    recorded_run(tmp_path / "20261201T000000Z" / "aider", TASK, listing(FIXED))  # not Shiro's reader's
    assert main(["--recorded", str(tmp_path)]) == 0
    assert fake.requests == []
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "request 0 as recorded, read today: 1 of 2 runs passed"  # the held-out run skipped
    assert f"{TASK}.1: PASS (wrote ['stats.py'])" in out[0]


def test_a_paraphrased_run_is_its_tasks_and_is_read_with_its_own_wording(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    run_dir = recorded_run(tmp_path, TASK, listing(FIXED), folder=f"{TASK}.1.p1")
    ((_, sample),) = rescore([run_dir])
    assert sample.passed and sample.written == ["stats.py"]
    assert run_name(run_dir) == (TASK, "p1")
    assert prompt_of(run_dir, sets.load(["own"], [TASK])[0]) != sets.load(["own"], [TASK])[0].prompt


def test_a_replaced_wording_is_what_the_model_is_sent_and_a_missing_one_sends_nothing(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    run_dir = recorded_run(tmp_path, TASK)
    with pytest.raises(SystemExit, match="'regulations' is not in the request's system message"):
        main([str(run_dir), "--samples", "1", "--url", fake.base_url, "--replace", "regulations", "x"])
    assert fake.requests == []
    fake.script.append(Step(Text(listing(FIXED))))
    argv = [str(run_dir), "--samples", "1", "--url", fake.base_url, "--replace", "rules", "house rules"]
    assert main(argv) == 0
    (sent,) = fake.bodies("/chat/completions")
    assert sent["messages"][0] == {"role": "system", "content": "house rules"}
    assert sent["messages"][1]["content"] == "Fix the average."  # the user's words as recorded


def test_a_sweep_probes_each_dev_run_under_the_folders_and_totals_the_passes(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "20261201T000000Z" / "shiro"
    recorded_run(runs, TASK)
    recorded_run(runs, TASK, folder=f"{TASK}.2")
    recorded_run(runs, splits.load()["sets"]["own"]["heldout"][0])  # skipped: held out
    fake.script += [Step(Text(listing(FIXED))), Step(Text(listing(STILL_WRONG)))] * 2
    assert main([str(tmp_path), "--samples", "2", "--url", fake.base_url]) == 0
    assert len(fake.bodies("/chat/completions")) == 4
    assert capsys.readouterr().out.splitlines()[-1] == "all runs: 2 of 4 samples passed"
    with pytest.raises(SystemExit, match="--recorded sends none"):
        main([str(tmp_path), "--recorded", "--replace", "rules", "x"])
