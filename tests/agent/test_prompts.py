"""The two arms' prompts differ only in the guidance block; the CLI shows them verbatim."""

from d2k_spec.task import default_tasks_root, load_task

from d2k_agent import cli
from d2k_agent.prompts import render


def test_guided_and_unguided_differ_only_in_the_guidance_block():
    for task_id in ("softmax", "layernorm", "gemm_bf16"):
        task = load_task(default_tasks_root() / task_id)
        g, u = render(task, "guided", 350), render(task, "unguided", 350)
        assert g.system == u.system
        assert u.guidance == "" and g.guidance
        assert g.user.count(g.guidance) == 1
        assert g.user.replace(g.guidance, "", 1) == u.user
        for item in task.design:  # every item's guidance is in the block, none of it in the unguided prompt
            first_line = item.guidance.strip().splitlines()[0]
            assert first_line in g.guidance and first_line not in u.user and first_line not in u.system


def test_prompt_command_prints_the_rendered_prompt_verbatim(capsys):
    task = load_task(default_tasks_root() / "softmax")
    assert cli.main(["prompt", "--task", "softmax", "--arm", "guided", "--turns", "7"]) == 0
    out = capsys.readouterr().out
    p = render(task, "guided", 7)
    assert out == p.verbatim() + "\n"
    assert "at most 7 turns" in out and "design.md" in out


def test_unknown_task_is_a_one_line_error(capsys):
    assert cli.main(["prompt", "--task", "nope", "--arm", "guided"]) == 2
    err = capsys.readouterr().err
    assert "unknown task 'nope'" in err and "Traceback" not in err
