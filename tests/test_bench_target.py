"""``rfcheck bench``'s compilation target: the instruction set each row was compiled for, the
AVX2 build run in a subprocess on an AVX-512 machine, and the targets of that instruction set."""

from __future__ import annotations

import json
import platform

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfcheck import bench
from rfcheck.engine import simd_ziggurat


def test_avx512_markers_find_evex_code_and_nothing_in_avx2_code():
    avx2 = "vpmuludq %ymm1, %ymm2, %ymm3\n\tvfmadd231pd %ymm4, %ymm5, %ymm15\n\tvgatherqpd %ymm0, (%rax,%ymm1,8), %ymm2"
    assert not any(bench.avx512_markers(avx2).values())
    assert bench.avx512_markers("vpmullq %ymm1, %ymm2, %ymm3")["EVEX-only instructions"] == 1
    assert bench.avx512_markers("vaddpd %zmm1, %zmm2, %zmm3")["zmm registers"] == 3
    assert bench.avx512_markers("vmovapd %ymm17, %ymm1")["xmm16-31/ymm16-31"] == 1
    assert bench.avx512_markers("vcmppd $1, %ymm1, %ymm2, %k1")["mask registers"] == 1


def test_target_env_sets_numba_cpu_and_drops_inherited_settings():
    env = bench.target_env("avx2", {"PATH": "/bin", "NUMBA_CPU_NAME": "skylake-avx512"})
    assert env["NUMBA_CPU_NAME"] == "haswell" and "-avx512f" in env["NUMBA_CPU_FEATURES"].split(",")
    assert env["PATH"] == "/bin" and env["RFCHECK_BENCH_CPU_TARGET"] == "avx2"
    assert env["OPENBLAS_CORETYPE"] == "Haswell"
    assert set(env["NPY_DISABLE_CPU_FEATURES"].split()) == set(bench._numpy_avx512_dispatch())
    native = bench.target_env("native", {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "+avx2",
                                         "OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4"})
    assert not {"NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"} & set(native)
    with pytest.raises(ValueError, match="unknown cpu target"):
        bench.target_env("avx9")


_PROBE = ("import json; from rfcheck import bench; from rfcheck.engine import rng; "
          "t = bench.check_target({!r}); t['x'] = rng.draw_normals(5, seed=3).tolist(); print(json.dumps(t))")


def test_avx2_subprocess_compiles_for_avx2_without_avx512_instructions():
    """The subprocess of ``--cpu-target avx2`` compiles for Haswell (AVX2, no AVX-512): its
    bulk normal kernel's assembly has no AVX-512 instruction, while the native build's has some on
    an AVX-512 host (so the check can fail); both draw the same normals (the build changes the
    speed, not the numbers)."""
    r = bench.run_in_target("avx2", ["-c", _PROBE.format("avx2")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    t = json.loads(r.stdout.strip().splitlines()[-1])
    assert (t["name"], t["isa"], t["cpu_name"], t["set_by"]) == ("avx2", "AVX2", "haswell",
                                                                  "NUMBA_CPU_NAME/NUMBA_CPU_FEATURES")
    assert t["asm_has_avx512"] is False and not any(t["asm_avx512"].values())
    assert t["normal_kernel"] == "pairs" and "two-loop fast pass" in bench.describe_target(t)
    # the other contenders run AVX2 code too: NumPy's loops and (where identified) its OpenBLAS
    assert t["numpy_simd"] in ("AVX2", "below AVX2")
    assert t["blas_core"] is None or t["blas_core"].lower() not in bench._AVX512_CORES
    native = bench.check_target("native")
    assert native["set_by"] == "host" and native["isa"] == native["host_isa"]
    wide = "pairs" if native["cpu_name"].startswith(simd_ziggurat.GATHERS_SLOW_PREFIXES) else "gathers"
    assert native["normal_kernel"] == ((wide if "+avx512dq" in native["features"] else "pairs")
                                       if native["isa"] == "AVX-512" else {"AVX2": "pairs"}.get(native["isa"], "loop"))
    if native["host_isa"] == "AVX-512":
        assert native["asm_has_avx512"] is True and native["numpy_simd"] == "AVX-512"
        assert "an AVX2 build measured on an AVX-512 machine" in bench.describe_target(t)
    from rfcheck.engine import rng

    assert t["x"] == rng.draw_normals(5, seed=3).tolist()


def test_cli_cpu_target_reruns_the_bench_in_a_subprocess(monkeypatch, tmp_path):
    from rfcheck.cli import main

    seen = []

    class Done:
        returncode = 0

    monkeypatch.delenv("RFCHECK_BENCH_CPU_TARGET", raising=False)
    monkeypatch.setattr(bench, "run_in_target", lambda target, argv: seen.append((target, argv)) or Done())
    out = str(tmp_path / "b.json")
    assert main(["bench", "--quick", "--json", out, "--cpu-target", "avx2"]) == 0
    assert seen == [("avx2", ["-m", "rfcheck", "bench", "--json", out, "--quick", "--cpu-target", "avx2"])]
    assert main(["bench", "--summarise", out, "--cpu-target", "avx2"]) == 2  # no timing to compile for


def test_cli_refuses_an_avx2_run_that_is_not_avx2_throughout(monkeypatch, capsys):
    """Inside the subprocess, a BLAS or NumPy still on AVX-512 (e.g. an OpenBLAS built without
    runtime dispatch, which ignores ``OPENBLAS_CORETYPE``) stops the bench with one line."""
    from rfcheck.cli import main

    def refuse(target):
        raise RuntimeError("asked for AVX2 throughout, but NumPy's loops dispatch to AVX2 and its BLAS runs "
                           "SkylakeX kernels")

    monkeypatch.setenv("RFCHECK_BENCH_CPU_TARGET", "avx2")
    monkeypatch.setattr(bench, "check_target", refuse)
    assert main(["bench", "--quick", "--cpu-target", "avx2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rfcheck: error: asked for AVX2 throughout, but NumPy's loops dispatch to AVX2 and its BLAS "
                   "runs SkylakeX kernels"]


def _entry(c, p, rate, base, share, isa):
    return {"workload": bench.WORKLOAD, "coupling": c, "path": p, "trials_per_s": rate, "baseline": "b",
            "baseline_trials_per_s": base, "ratio": rate / base, "flop_ceiling_share": share,
            "flops_per_trial": None if share is None else 1.0, "machine_gflops": 70.0, "machine": "m",
            "target": {"isa": isa, "set_by": "host", "host_isa": isa, "cpu_name": "c"}}


@pytest.mark.parametrize("isa", ["AVX-512", "AVX2"])
def test_isa_targets_use_the_row_instruction_set(isa):
    rows = [_entry("iid", "ensemble", 200.0, 10.0, 0.02, isa), _entry("iid", "projection", 4e6, 1.0, None, isa),
            _entry("orf", "ensemble", 100.0, 6.0, 0.32, isa), _entry("orf", "projection", 2.2e6, 1.0, None, isa),
            _entry("simrf", "ensemble", 77.0, 5.0, 0.3, isa), _entry("simrf+", "ensemble", 76.0, 4.0, 0.3, isa)]
    rows.append({"workload": bench.RNG_WORKLOAD, "normals_per_ns": 0.8})
    got = {t["target"]: t["holds"] for t in bench.targets(rows) if t.get("isa") == isa}
    avx2 = isa == "AVX2"
    p = f"{isa} target: "
    assert got[p + f"orf ensemble >= {30 if avx2 else 35}% of the dgemm ceiling"] is avx2
    assert got[p + f"orf projection >= {2.0 if avx2 else 2.7}M trials/s"] is avx2
    assert got[p + f"iid projection >= {3.5 if avx2 else 5.0}M trials/s"] is avx2
    assert got[p + f"normals >= {0.6 if avx2 else 1.0} per ns per core"] is avx2
    assert got[p + f"iid ensemble >= {15 if avx2 else 20}x NumPy"] is True  # 20x
    assert got[p + f"orf ensemble >= {15 if avx2 else 20}x NumPy"] is avx2  # 16.7x
    assert got[p + "simrf ensemble within 1.3x of orf's trials/s"] is True  # 0.77 >= 1/1.3
    assert got[p + "simrf+ ensemble within 1.3x of orf's trials/s"] is False  # 0.76 < 0.769
    mixed = [rows[0], {**rows[1], "target": {**rows[1]["target"], "isa": "other"}}]
    assert not any("isa" in t for t in bench.targets(mixed))  # no table for mixed builds


def test_summary_states_target_machine_and_generator_rates():
    """``summarise_runs`` of stored runs with targets: the header line names the build and the
    machine, each generator's normals per ns (median, range), and the normal target of the build's instruction set is
    counted from the engine's generator only."""
    def run(rate, sm, ph):
        e = _entry("orf", "ensemble", rate, 1.0, 0.3, "AVX2")
        e["target"].update(cpu_name="haswell", set_by="NUMBA_CPU_NAME/NUMBA_CPU_FEATURES", host_isa="AVX-512")
        e["machine_gflops"], e["machine"] = 100.0, "Xeon, 2 logical cores, AVX-512"
        return [e, *({"workload": bench.RNG_WORKLOAD, "generator": g, "normals_per_ns": v}
                     for g, v in ((bench.DEFAULT_GENERATOR, sm), ("philox4x32-10", ph)))]

    sm = bench.summarise_runs([run(10.0, 0.5, 0.4), run(12.0, 0.7, 0.9), run(11.0, 0.65, 0.3)])
    assert sm["generators"] == {"splitmix64": (0.65, 0.5, 0.7), "philox4x32-10": (0.4, 0.3, 0.9)}
    head = bench.format_summary(sm).splitlines()[0]
    assert "compiled for AVX2 (LLVM CPU 'haswell'" in head and "an AVX2 build measured on an AVX-512 machine" in head
    assert "machine: Xeon, 2 logical cores, AVX-512" in head
    assert "splitmix64 bulk normals per ns per core (one thread): 0.650 (0.500-0.700)" in head
    assert sm["targets"]["AVX2 target: normals >= 0.6 per ns per core"] == 2  # 0.7, 0.65; not philox's 0.9


def test_old_targets_name_warns_and_aliases():
    with pytest.warns(DeprecationWarning, match="TARGETS_BY_ISA"):
        assert bench.TARGETS_ISSUE24 is bench.TARGETS_BY_ISA


def test_machine_description_states_the_cores_a_pinned_process_may_use(monkeypatch):
    """A run pinned to 2 of a machine's 16 logical cores (``taskset``) says so in its ``machine``
    field; an unpinned run keeps the plain count."""
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert ", 16 logical cores (2 allowed to this process), " in bench.machine_description()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    desc = bench.machine_description()
    assert ", 16 logical cores, " in desc and "allowed" not in desc

    def refuse(pid):
        raise OSError("not permitted")

    monkeypatch.setattr(os, "sched_getaffinity", refuse, raising=False)  # a sandbox refusing the call
    assert ", 16 logical cores, " in bench.machine_description()
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # a platform without it
    assert ", 16 logical cores, " in bench.machine_description()


# --------------------------------------------------------------------------- core clock
@given(n=st.integers(0, 300), x=st.integers(0, 2**64 - 1), ops=st.sampled_from([2, 3]))
@settings(max_examples=60, deadline=None)
def test_clock_chains_compute_their_recurrence(n, x, ops):
    """The compiled chains return the recurrence's value (mod 2**64): the loop is executed, step
    by step, not skipped or simplified away."""
    want = x
    for _ in range(n):
        want = (want + (want >> 1) if ops == 2 else (want ^ (want >> 1)) + 0x9E37) % 2**64
    assert bench.clock_steps(n, x, ops=ops) == want


def test_clock_steps_rejects_other_chains_and_negative_counts():
    with pytest.raises(ValueError, match="ops must be 2 or 3"):
        bench.clock_steps(5, ops=4)
    with pytest.raises(ValueError, match="n must be >= 0"):
        bench.clock_steps(-1)
    with pytest.raises(ValueError, match="steps and repeats must be >= 1"):
        bench.core_clock(steps=0)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="cycle model stated for x86-64")
def test_core_clock_reads_a_clock_a_processor_can_have():
    """A chain the compiler had folded would run in no time (a clock of hundreds of GHz) and
    make the three-operation chain as fast as the two-operation one; the reading is a plain
    processor clock and the check near 1.5 (loose bounds: CI machines are loaded)."""
    c = bench.core_clock(steps=1 << 20, repeats=9)
    assert 0.2 < c["ghz"] < 10.0
    assert 1.1 < c["check"] < 2.2


def test_clock_and_cycles_reach_the_tables_and_the_summary():
    """A run with clock fields: the engine table states the clock, the generator line its normals
    per cycle, the summary both (median over runs); a run stored before them shows neither."""
    e = _entry("orf", "ensemble", 10.0, 1.0, 0.3, "AVX2")
    e.update(clock_ghz=3.2, clock_ghz_rounds=[3.0, 3.2], clock_check=1.5, machine_gflops=100.0,
             trials_per_s_1thread=6.0, parallel_efficiency=0.83, efficiency_rounds=[0.8], ratio_rounds=[10.0])
    g = {"workload": bench.RNG_WORKLOAD, "generator": bench.DEFAULT_GENERATOR, "normals_per_ns": 0.6,
         "normals_per_ns_best": 0.7, "ns_per_normal": 1 / 0.6, "repeats": 3, "block": 4096, "n": 1 << 20,
         "normals_per_cycle": 0.2, "rounds_clock_ghz": [3.0, 3.0, 3.1], "target": {"isa": "AVX2"}}
    assert "core clock of one thread: 3.20 GHz (best round; rounds 3.00-3.20" in bench.format_table([e])
    assert "0.200 per cycle (median round; clock 3.00 GHz)" in bench.format_rng_table([g])
    runs = [[e, g], [{**e, "clock_ghz": 2.8}, {**g, "normals_per_cycle": 0.3}]]
    head = bench.format_summary(bench.summarise_runs(runs)).splitlines()[0]
    assert ("splitmix64 bulk normals per ns per core (one thread): 0.600 (0.600-0.600), "
            "per cycle 0.250 (0.200-0.300)") in head
    assert "core clock of one thread (GHz, each run's best round): 3.00 (2.80-3.20)" in head
    old = {k: v for k, v in e.items() if not k.startswith("clock")}
    old_g = {k: v for k, v in g.items() if k not in ("normals_per_cycle", "rounds_clock_ghz")}
    assert "core clock" not in bench.format_table([old])
    assert "per cycle" not in bench.format_rng_table([old_g])
    assert "per cycle" not in bench.format_summary(bench.summarise_runs([[old, old_g]]))


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="cycle model stated for x86-64")
def test_generator_rows_pair_each_round_with_its_clock():
    """``run_rng_bench``: every round's fill has the clock measured just before it, and the normals
    per cycle are the median over the rounds of the round's rate over the round's clock."""
    import numpy as np

    for e in bench.run_rng_bench(quick=True):
        assert len(e["rounds_clock_ghz"]) == len(e["rounds_ns_per_normal"]) == e["repeats"]
        per_round = [1 / ns / c for ns, c in zip(e["rounds_ns_per_normal"], e["rounds_clock_ghz"], strict=True)]
        assert np.isclose(e["normals_per_cycle"], np.median(per_round), rtol=1e-12)
