"""A finished group's state stores, read back as each job's internal topics (their change feeds)."""

from __future__ import annotations

from collections.abc import Sequence

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from qtt.errors import ReplayError
from qtt.runtime.build.builder import PlanBuilder
from qtt.runtime.execute import internal_topics
from qtt.runtime.execute.staged import StagedGroup, read_topics
from qtt.runtime.jobs import Job, QueryRun
from qtt.runtime.spark import infrastructure


def add_state_feeds(
    session: SparkSession,
    jobs: Sequence[Job],
    builders: dict[int, PlanBuilder],
    runs: dict[int, QueryRun],
    checkpoint: str,
    staged: StagedGroup | None,
) -> None:
    """Add each job's state change feeds (its internal topics) to its run."""
    if staged is not None:
        for job in jobs:
            if job.mode.capture_state:
                topics = read_topics(session, staged, job) + runs[job.job_id].internal_topics
                runs[job.job_id].internal_topics = sorted(topics, key=lambda topic: topic.name)
        return
    if not any(job.mode.capture_state for job in jobs):
        return
    owners = [
        internal_topics.Owner(
            job.query.query_id,
            tuple(builders[job.job_id].state_operators),
            job.mode.capture_state,
            first_batch=job.resumes_at or 0,
            final=job.mode.final_state,
        )
        for job in jobs
    ]
    try:
        feeds = internal_topics.read(session, checkpoint, owners)
    except internal_topics.StateLayoutError as e:
        raise ReplayError(str(e)) from e
    except (PySparkException, Py4JJavaError) as e:  # Spark could not read its own state back
        raise ReplayError(f"the state could not be read back: {infrastructure.java_reason(e)}") from e
    for job, topics in zip(jobs, feeds, strict=True):
        topics += runs[job.job_id].internal_topics
        runs[job.job_id].internal_topics = sorted(topics, key=lambda topic: topic.name)
