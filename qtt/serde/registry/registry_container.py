"""``--schema-registry docker``: Confluent's Schema Registry image, with the Kafka broker it keeps
its schemas in, started through testcontainers where a Docker engine runs.

The containers live as long as the process that started them (stopped at exit). Without a
Docker engine the request fails with the reason, never silently falls back to the embedded
registry: a user who asks for a real registry must get one.
"""

from __future__ import annotations

import atexit
from typing import Any

from qtt.errors import QttError

#: the value of --schema-registry / QTT_SCHEMA_REGISTRY_URL that asks for containers
DOCKER = "docker"
KAFKA_IMAGE = "confluentinc/cp-kafka:7.6.0"
REGISTRY_IMAGE = "confluentinc/cp-schema-registry:7.6.0"
_started: list[str] = []


class RegistryUnavailable(QttError):
    """No Docker engine (or no testcontainers) to start the registry in."""


def docker_unavailable() -> str | None:
    """Why containers cannot start here, or None when a Docker engine answers."""
    try:
        import docker  # testcontainers' own client
        import testcontainers  # noqa: F401
    except ImportError as e:
        return f"testcontainers is not installed ({e.name}); pip install testcontainers"
    try:
        docker.from_env().ping()
    except Exception as e:
        return f"no Docker engine answers ({type(e).__name__}: {e})"
    return None


def resolve(url: str) -> str:
    """``url`` itself, or for :data:`DOCKER` the URL of a registry started in containers (once)."""
    if url != DOCKER:
        return url
    if _started:
        return _started[0]
    reason = docker_unavailable()
    if reason is not None:
        msg = f"cannot start a schema registry in Docker: {reason}"
        raise RegistryUnavailable(msg, hint="give the URL of a running registry, or leave the option out")
    _started.append(_start())
    return _started[0]


def _start() -> str:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy
    from testcontainers.kafka import KafkaContainer

    network: Any = Network().create()
    kafka = KafkaContainer(KAFKA_IMAGE).with_network(network).with_network_aliases("kafka")
    kafka.start()
    registry = (
        DockerContainer(REGISTRY_IMAGE)
        .with_network(network)
        .with_env("SCHEMA_REGISTRY_HOST_NAME", "schema-registry")
        .with_env("SCHEMA_REGISTRY_LISTENERS", "http://0.0.0.0:8081")
        .with_env("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS", "PLAINTEXT://kafka:9092")
        .with_exposed_ports(8081)
        .waiting_for(LogMessageWaitStrategy("Server started, listening for requests"))
    )
    registry.start()

    def stop() -> None:
        for container in (registry, kafka):
            container.stop()
        network.remove()

    atexit.register(stop)
    return f"http://{registry.get_container_host_ip()}:{registry.get_exposed_port(8081)}"
