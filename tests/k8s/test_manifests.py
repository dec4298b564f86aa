"""The Kubernetes manifests: each overlay renders, every object validates strictly against a fixed Kubernetes
version's schemas, and the structure the design relies on is there (probes, limits, security, shards, ...).

Offline: `kubectl kustomize` renders, kubernetes_validate holds the schemas. Skipped only without kubectl.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from codesearch import __version__
from codesearch.cli.main import build_parser
from codesearch.common.errors import ServiceError, check_repo_name
from codesearch.config import DEFAULT_PORT, Settings
from codesearch.orchestrator.sharding import rendezvous_shard
from codesearch.server import SHUTDOWN_GRACE_S
from codesearch.v1 import graph_pb2, keyword_pb2, rerank_pb2, search_pb2, vector_pb2

K8S_DIR = Path(__file__).resolve().parents[2] / "k8s"
KUBECTL = shutil.which("kubectl")
K8S_VERSION = "1.30.0"  # oldest release with native sidecars and backoffLimitPerIndex on by default
OVERLAYS = ("dev", "prod")
RENDER_TIMEOUT_S = 60
IMAGE = f"ghcr.io/codesearch/codesearch:{__version__}"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job")
RECOMMENDED_LABELS = (
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/managed-by",
)
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
GRPC_SERVICES = {"", "grpc.health.v1.Health"} | {
    service.full_name
    for module in (search_pb2, keyword_pb2, vector_pb2, graph_pb2, rerank_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
}

pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not installed: the overlays cannot be rendered"
)


@functools.cache
def render(overlay: str) -> tuple[dict[str, Any], ...]:
    assert KUBECTL is not None
    out = subprocess.run(
        [KUBECTL, "kustomize", str(K8S_DIR / "overlays" / overlay)],
        check=True,
        capture_output=True,
        text=True,
        timeout=RENDER_TIMEOUT_S,
    ).stdout
    return tuple(doc for doc in yaml.safe_load_all(out) if doc)


def objects(overlay: str, kind: str) -> list[dict[str, Any]]:
    return [o for o in render(overlay) if o["kind"] == kind]


def one(overlay: str, kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects(overlay, kind) if o["metadata"]["name"] == name]
    assert len(found) == 1, f"{overlay}: expected one {kind}/{name}, found {len(found)}"
    return found[0]


def workloads(overlay: str) -> list[dict[str, Any]]:
    return [o for o in render(overlay) if o["kind"] in WORKLOAD_KINDS]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def all_containers(workload: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, container) for init and regular containers; `where` names it in failure messages."""
    spec = pod_spec(workload)
    for c in [*spec.get("initContainers", []), *spec["containers"]]:
        yield f"{workload['kind']}/{workload['metadata']['name']}/{c['name']}", c


def is_codesearch(container: dict[str, Any]) -> bool:
    return container["image"].startswith("ghcr.io/codesearch/codesearch:")


def serving_containers(workload: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Containers that serve: regular containers of long-running workloads, and native sidecars anywhere."""
    for where, c in all_containers(workload):
        sidecar = c.get("restartPolicy") == "Always"
        regular = c in pod_spec(workload)["containers"]
        if sidecar or (regular and workload["kind"] != "Job"):
            yield where, c


def env_config(overlay: str) -> dict[str, str]:
    (cm,) = [o for o in objects(overlay, "ConfigMap") if o["metadata"]["name"].startswith("codesearch-env-")]
    return cm["data"]


def container_env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


# --- every overlay --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates_strictly(overlay: str) -> None:
    errors = []
    for obj in render(overlay):
        name = f"{obj['kind']}/{obj['metadata']['name']}"
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{name}: {'.'.join(str(p) for p in e.path)}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(f"{name}: no schema: {e.message}")
    assert not errors, "\n".join(errors)
    assert len(render(overlay)) >= 5


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_serving_containers_have_grpc_probes_on_real_services(overlay: str) -> None:
    for w in workloads(overlay):
        for where, c in serving_containers(w):
            missing = [p for p in PROBES if p not in c and not (w["kind"] == "Job" and p == "readinessProbe")]
            assert not missing, f"{where}: no {missing}"
            if not is_codesearch(c):
                continue
            for p in PROBES:
                if p not in c:
                    continue
                assert "grpc" in c[p], f"{where}: {p} is not a gRPC probe"
                assert c[p]["grpc"]["port"] == DEFAULT_PORT, f"{where}: {p} port"
                service = c[p]["grpc"].get("service", "")
                assert service in GRPC_SERVICES, f"{where}: {p} checks unknown service {service!r}"
            # Model load and index open happen before the port opens: the startup budget must be generous.
            start = c["startupProbe"]
            assert start["periodSeconds"] * start["failureThreshold"] >= 120, (
                f"{where}: startupProbe too short"
            )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_has_requests_and_limits(overlay: str) -> None:
    for w in workloads(overlay):
        for where, c in all_containers(w):
            res = c.get("resources", {})
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(res.get(part, {})), f"{where}: {part} lacks cpu or memory"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_are_locked_down(overlay: str) -> None:
    for w in workloads(overlay):
        spec = pod_spec(w)
        pod_sc = spec.get("securityContext", {})
        assert pod_sc.get("runAsNonRoot") is True, f"{w['metadata']['name']}: pod may run as root"
        assert pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault"
        assert spec.get("automountServiceAccountToken") is False
        # Longer than the server's drain plus any preStop pause, or the drain is cut by SIGKILL.
        assert spec.get("terminationGracePeriodSeconds", 30) > SHUTDOWN_GRACE_S + 5
        tmp_volumes = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
        for where, c in all_containers(w):
            sc = c.get("securityContext", {})
            assert sc.get("readOnlyRootFilesystem") is True, f"{where}: writable root filesystem"
            assert sc.get("allowPrivilegeEscalation") is False, f"{where}: privilege escalation allowed"
            assert sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities not dropped"
            assert sc.get("runAsNonRoot", True) is True
            mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
            assert mounts.get("/tmp") in tmp_volumes, f"{where}: /tmp is not an emptyDir"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_codesearch_containers_use_the_image_and_valid_commands(overlay: str) -> None:
    parser, _ = build_parser()
    serve_services: list[list[str]] = []
    for w in workloads(overlay):
        for where, c in all_containers(w):
            if not is_codesearch(c):
                continue
            assert c["image"] == IMAGE, f"{where}: {c['image']}"
            if "command" in c:  # a script run with the image's shell
                assert c["command"][0] == "/bin/sh", where
                continue
            args = parser.parse_args(c["args"])  # the real CLI accepts them (SystemExit otherwise)
            if args.command == "serve":
                assert args.listen == f"0.0.0.0:{DEFAULT_PORT}", f"{where}: kubelet probes the pod IP"
                ports = [p["containerPort"] for p in c.get("ports", [])]
                assert ports == [DEFAULT_PORT], f"{where}: ports {ports}"
                serve_services.append(args.services)
    assert serve_services


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_recommended_labels_everywhere_and_selectors_select(overlay: str) -> None:
    objs = render(overlay)
    for o in objs:
        labels = o["metadata"].get("labels", {})
        missing = [k for k in RECOMMENDED_LABELS if k not in labels]
        assert not missing, f"{o['kind']}/{o['metadata']['name']}: no {missing}"
        assert labels["app.kubernetes.io/version"] == __version__
    pods = {w["metadata"]["name"]: w["spec"]["template"]["metadata"]["labels"] for w in workloads(overlay)}
    for w in workloads(overlay):
        if w["kind"] != "Job":
            assert matches(w["spec"]["selector"]["matchLabels"], pods[w["metadata"]["name"]]), w["metadata"][
                "name"
            ]
    for o in objs:
        if o["kind"] == "Service":
            selector = o["spec"]["selector"]
        elif o["kind"] == "PodDisruptionBudget":
            selector = o["spec"]["selector"]["matchLabels"]
        else:
            continue
        selected = [n for n, labels in pods.items() if matches(selector, labels)]
        assert len(selected) == 1, f"{o['kind']}/{o['metadata']['name']} selects {selected}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_references_resolve(overlay: str) -> None:
    """ConfigMaps, PVCs, Service accounts and named ports that pods use exist in the same rendering."""
    names = {(o["kind"], o["metadata"]["name"]) for o in render(overlay)}
    for w in workloads(overlay):
        spec = pod_spec(w)
        assert ("ServiceAccount", spec["serviceAccountName"]) in names
        for v in spec.get("volumes", []):
            if "configMap" in v:
                assert ("ConfigMap", v["configMap"]["name"]) in names, v
            if "persistentVolumeClaim" in v:
                assert ("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"]) in names, v
        claim_templates = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
        volumes = {v["name"] for v in spec.get("volumes", [])} | claim_templates
        for where, c in all_containers(w):
            for ref in c.get("envFrom", []):
                assert ("ConfigMap", ref["configMapRef"]["name"]) in names, where
            for m in c.get("volumeMounts", []):
                assert m["name"] in volumes, f"{where}: mounts unknown volume {m['name']}"
    for svc in objects(overlay, "Service"):
        for port in svc["spec"]["ports"]:
            target = port["targetPort"]
            pods = [
                w
                for w in workloads(overlay)
                if matches(svc["spec"]["selector"], w["spec"]["template"]["metadata"]["labels"])
            ]
            named = {p.get("name") for w in pods for _, c in all_containers(w) for p in c.get("ports", [])}
            assert target in named, f"Service/{svc['metadata']['name']}: no container port named {target}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_environment_is_read_by_settings(overlay: str) -> None:
    env = env_config(overlay)
    settings = Settings.from_env(env)  # numbers parse
    assert str(settings.home) == "/data"
    assert settings.listen_addr == f"0.0.0.0:{DEFAULT_PORT}"
    assert env["HF_HUB_OFFLINE"] == "1"
    for w in workloads(overlay):
        for where, c in all_containers(w):
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            if any(
                r.get("configMapRef", {}).get("name", "").startswith("codesearch-env-")
                for r in c.get("envFrom", [])
            ):
                assert str(settings.home) in mounts, f"{where}: CODESEARCH_HOME is not on a volume"


# --- dev ------------------------------------------------------------------------------------------------------


def test_dev_is_one_pod_serving_everything() -> None:
    (w,) = workloads("dev")
    assert w["kind"] == "Deployment" and w["spec"]["replicas"] == 1
    assert w["spec"]["strategy"]["type"] == "Recreate"  # one writer of the ReadWriteOnce volume
    (c,) = pod_spec(w)["containers"]
    assert c["args"][:2] == ["serve", "all"]
    (pvc,) = objects("dev", "PersistentVolumeClaim")
    data = [v for v in pod_spec(w)["volumes"] if v.get("persistentVolumeClaim")]
    assert [v["persistentVolumeClaim"]["claimName"] for v in data] == [pvc["metadata"]["name"]]
    (svc,) = objects("dev", "Service")
    assert svc["spec"]["ports"][0]["port"] == DEFAULT_PORT
    assert not objects("dev", "HorizontalPodAutoscaler")


# --- prod -----------------------------------------------------------------------------------------------------


def shard_count() -> int:
    return one("prod", "StatefulSet", "codesearch-shard")["spec"]["replicas"]


def test_prod_shards_statefulset_with_claims_and_headless_service() -> None:
    sts = one("prod", "StatefulSet", "codesearch-shard")
    (c,) = pod_spec(sts)["containers"]
    args = build_parser()[0].parse_args(c["args"])
    assert sorted(args.services) == ["graph", "keyword", "vector"]
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == env_config("prod")["CODESEARCH_HOME"]
    svc = one("prod", "Service", sts["spec"]["serviceName"])
    assert svc["spec"]["clusterIP"] == "None"
    # The orchestrator's shard list names every pod through the headless Service, in ordinal order.
    shards = env_config("prod")["CODESEARCH_SHARDS"].split(",")
    name, service = sts["metadata"]["name"], svc["metadata"]["name"]
    assert shards == [f"{name}-{i}.{service}:{DEFAULT_PORT}" for i in range(shard_count())]


def test_prod_rerank_is_reached_by_client_side_round_robin_over_a_headless_service() -> None:
    address = env_config("prod")["CODESEARCH_RERANK_ADDR"]
    m = re.fullmatch(r"dns:///([a-z0-9-]+):(\d+)", address)
    assert m, address
    svc = one("prod", "Service", m.group(1))
    assert svc["spec"]["clusterIP"] == "None"
    assert int(m.group(2)) == svc["spec"]["ports"][0]["port"]
    rerank = one("prod", "Deployment", "codesearch-rerank")
    assert matches(svc["spec"]["selector"], rerank["spec"]["template"]["metadata"]["labels"])


@pytest.mark.parametrize("deployment", ["codesearch-orchestrator", "codesearch-rerank"])
def test_prod_hpa_on_cpu_and_pdb(deployment: str) -> None:
    d = one("prod", "Deployment", deployment)
    assert "replicas" not in d["spec"], "the HPA owns the replica count"
    (hpa,) = [
        h
        for h in objects("prod", "HorizontalPodAutoscaler")
        if h["spec"]["scaleTargetRef"]["name"] == deployment
    ]
    assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
    assert hpa["spec"]["minReplicas"] >= 2  # a PDB with minAvailable 1 needs two to allow a drain
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    (c,) = pod_spec(d)["containers"]
    assert "cpu" in c["resources"]["requests"]  # utilisation is measured against the request
    labels = d["spec"]["template"]["metadata"]["labels"]
    pdbs = [
        p
        for p in objects("prod", "PodDisruptionBudget")
        if matches(p["spec"]["selector"]["matchLabels"], labels)
    ]
    assert len(pdbs) == 1


def test_prod_every_serving_workload_has_a_pdb_except_the_collector() -> None:
    covered = {
        w["metadata"]["name"]
        for w in workloads("prod")
        for p in objects("prod", "PodDisruptionBudget")
        if matches(p["spec"]["selector"]["matchLabels"], w["spec"]["template"]["metadata"]["labels"])
    }
    assert covered == {"codesearch-shard", "codesearch-orchestrator", "codesearch-rerank"}


def test_prod_indexed_job_covers_every_shard() -> None:
    job = one("prod", "Job", "codesearch-index")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == shard_count()
    assert pod_spec(job)["restartPolicy"] == "Never"
    containers = {c["name"]: c for _, c in all_containers(job)}
    assert set(containers) == {"fetch", "index"}
    env = container_env(containers["index"])
    # The indexer routes by the same shard list as the orchestrator and skips files by the same limit.
    for key in ("CODESEARCH_SHARDS", "CODESEARCH_MAX_FILE_BYTES"):
        assert env[key] == env_config("prod")[key], key
    assert env["CODESEARCH_ALLOWED_ROOTS"] == "/src"
    assert containers["fetch"]["env"] == containers["index"]["env"]
    index_sh = one("prod", "ConfigMap", "codesearch-index")["data"]["index.sh"]
    assert "--embedded" in index_sh
    build_parser()[0].parse_args(["index", "/src/r", "--name", "r", "--embedded", "--quiet"])


def repo_lines() -> list[list[str]]:
    text = one("prod", "ConfigMap", "codesearch-index")["data"]["repos.txt"]
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_prod_index_repository_list_and_scripts() -> None:
    names = []
    for fields in repo_lines():
        name, url, *ref = fields
        try:
            check_repo_name(name)
        except ServiceError as e:
            pytest.fail(f"repos.txt: {e.message}")
        assert url.startswith("https://") and len(ref) <= 1, fields
        names.append(name)
    assert names and len(set(names)) == len(names)
    cm = one("prod", "ConfigMap", "codesearch-index")
    for script in ("fetch.sh", "index.sh"):
        subprocess.run(["sh", "-n"], input=cm["data"][script], text=True, check=True, timeout=10)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_prod_fetch_script_clones_each_repository_into_its_rendezvous_shard(tmp_path: Path) -> None:
    """Runs fetch.sh for every job index against local clones of repos.txt's names."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "a.py").write_text("def f():\n    return 1\n")
    git = ["git", "-C", str(upstream), "-c", "user.email=t@t", "-c", "user.name=t"]
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], check=True, timeout=30)
    names = [fields[0] for fields in repo_lines()]
    repos = tmp_path / "repos.txt"
    repos.write_text("".join(f"{n} file://{upstream} main\n" for n in names))
    script = tmp_path / "fetch.sh"
    script.write_text(one("prod", "ConfigMap", "codesearch-index")["data"]["fetch.sh"])
    job_env = container_env(pod_spec(one("prod", "Job", "codesearch-index"))["containers"][0])
    shards = job_env["CODESEARCH_SHARDS"].split(",")
    fetched: dict[str, int] = {}
    for i in range(shard_count()):
        src = tmp_path / f"src{i}"
        src.mkdir()
        env = {
            **os.environ,
            "JOB_COMPLETION_INDEX": str(i),
            "CODESEARCH_SHARDS": job_env["CODESEARCH_SHARDS"],
            "CODESEARCH_REPOS_FILE": str(repos),
            "CODESEARCH_SRC_DIR": str(src),
            "HOME": str(tmp_path),
        }
        subprocess.run(["sh", str(script)], env=env, check=True, timeout=120, capture_output=True)
        for d in src.iterdir():
            if d.is_dir():
                assert (d / "a.py").is_file()
                assert d.name not in fetched, f"{d.name} fetched by two shards"
                fetched[d.name] = i
    assert fetched == {n: rendezvous_shard(n, shards) for n in names}
    assert len(set(fetched.values())) > 1 or len(names) == 1  # the list really is spread


def test_prod_otel_collector_receives_otlp_grpc_and_pods_point_at_it() -> None:
    collector = one("prod", "Deployment", "codesearch-otel-collector")
    svc = one("prod", "Service", "codesearch-otel-collector")
    (port,) = svc["spec"]["ports"]
    assert port["port"] == 4317
    (c,) = pod_spec(collector)["containers"]
    (cm_volume,) = [v for v in pod_spec(collector)["volumes"] if "configMap" in v]
    cm = one("prod", "ConfigMap", cm_volume["configMap"]["name"])
    (config_text,) = cm["data"].values()
    config = yaml.safe_load(config_text)
    assert config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(":4317")
    traces = config["service"]["pipelines"]["traces"]
    assert (
        traces["receivers"] == ["otlp"] and "batch" in traces["processors"] and "debug" in traces["exporters"]
    )
    for pipeline in config["service"]["pipelines"].values():
        for part in ("receivers", "processors", "exporters"):
            assert set(pipeline[part]) <= set(config[part]), f"pipeline uses an undefined {part[:-1]}"
    assert f"--config=/conf/{cm_volume['configMap']['items'][0]['path']}" in c["args"]
    endpoint = f"http://{svc['metadata']['name']}:{port['port']}"
    assert env_config("prod")["OTEL_EXPORTER_OTLP_ENDPOINT"] == endpoint
    assert env_config("prod")["OTEL_TRACES_EXPORTER"] == "otlp"
    job = one("prod", "Job", "codesearch-index")
    assert container_env(pod_spec(job)["containers"][0])["OTEL_EXPORTER_OTLP_ENDPOINT"] == endpoint
