"""The README's example runs as written."""

import pathlib
import re


def test_readme_example_runs():
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["udots"].shape == (4096, 4)
    assert namespace["dudot_dm"].shape == (3,)
    assert float(namespace["final"].t) > 0.99
    assert bool(namespace["results"].success)
    assert namespace["lam"].shape == (3,) and namespace["udot_pair"].shape == (2, 3)
    assert namespace["q_at_report_times"].shape == (20, 3) and int(namespace["steps_taken"]) > 20
    # joint torques: 2 N m on the Pin's u speeds it up (M^-1 is positive definite)
    assert float(namespace["udot_driven"][0]) > float(namespace["udot"][0])
    # the OpenSim example: a fully excited soleus pulls, and its activation rises
    assert float(namespace["soleus_force"]) > 0 and float(namespace["soleus_zdot"][0]) > 0
