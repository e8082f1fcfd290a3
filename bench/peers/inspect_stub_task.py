"""An Inspect AI task for the kill -9 bench: STUB_CALLS samples, each one generate() call to the
model under test (the loopback stub), no scorer: the same number of calls jurybench's trial
makes, so the two resume counts are compared on equal footing."""

import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate


@task
def stub_stories() -> Task:
    n = int(os.environ["STUB_CALLS"])
    return Task(dataset=[Sample(input=f"Story {i}", id=i) for i in range(n)], solver=[generate()])
