"""load_urdf time against the number of links: an n-link revolute chain (each link 1 kg, a limited joint, so each
joint also gets a MobilityLinearStop), loaded as text, then ``realize_topology``; wall and CPU seconds.

    PYTHONPATH=. python3 benchmarks/import_time.py [--links 250 500 1000]

Issue 36's target: linear in the links, a 1000-link URDF in <= 2 s.
"""

from __future__ import annotations

import argparse
import time
import warnings

import jax

jax.config.update("jax_enable_x64", True)

import jaxbody as jb  # noqa: E402


def chain(n: int) -> str:
    """URDF text of an n-link revolute chain."""
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
                '</inertial>')
    links = "".join(f'<link name="l{i}">{inertial}</link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
                     f'<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>' for i in range(n))
    return f'<robot name="chain">{links}{joints}</robot>'


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--links", type=int, nargs="+", default=[250, 500, 1000])
    for n in p.parse_args().links:
        text = chain(n)
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imported = jb.io.load_urdf(text)
        load_wall, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
        wall = time.perf_counter()
        imported.system.realize_topology()
        print(f"{n} links: load_urdf {load_wall:.2f} s wall ({load_cpu:.2f} s CPU), "
              f"realize_topology {time.perf_counter() - wall:.2f} s", flush=True)


if __name__ == "__main__":
    main()
