"""``--schema-registry docker``: a real registry in containers where Docker runs, a clear error where not."""

from __future__ import annotations

import pytest

from qtt.serde.registry import registry_container
from qtt.serde.registry.registry_container import DOCKER, RegistryUnavailable, docker_unavailable, resolve
from qtt.serde.registry.schema_registry import Registry

NO_DOCKER = docker_unavailable()


def test_a_url_is_used_as_given() -> None:
    assert resolve("http://registry.internal:8081") == "http://registry.internal:8081"


@pytest.mark.skipif(NO_DOCKER is None, reason="a Docker engine runs here")
def test_asking_for_docker_without_an_engine_says_why(monkeypatch) -> None:
    monkeypatch.setattr(registry_container, "_started", [])
    with pytest.raises(RegistryUnavailable, match="cannot start a schema registry in Docker"):
        resolve(DOCKER)


@pytest.mark.slow
@pytest.mark.skipif(NO_DOCKER is not None, reason=f"no Docker here: {NO_DOCKER}")
def test_the_docker_registry_registers_and_serves_schemas() -> None:
    registry = Registry(DOCKER)
    first = registry.register("orders-value", "AVRO", '{"type":"record","name":"O","fields":[]}')
    assert first.schema_id > 0 and first.version == 1
    assert registry.latest("orders-value") == first
    other = Registry(DOCKER)
    assert other.latest("orders-value") is None, "each replay registers in a context of its own"


@pytest.mark.skipif(NO_DOCKER is None, reason="a Docker engine runs here")
def test_the_cli_refuses_a_docker_registry_it_cannot_start(capsys, monkeypatch) -> None:
    from qtt.cli import main

    monkeypatch.setattr(registry_container, "_started", [])
    assert main(["run", "cases/smoke.json", "--schema-registry", "docker"]) == 2
    assert "cannot start a schema registry in Docker" in capsys.readouterr().err
