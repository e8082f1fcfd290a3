"""The built-in rubric kinds (``rubric/_model.py``), registered the way a third party registers
its own (``rubric/_kinds.py``)."""

from __future__ import annotations


def register() -> None:
    """Register the built-in kinds (the entry point ``jurybench.rubric_kinds: builtin``)."""
    from jurybench.rubric import _model as m
    from jurybench.rubric._kinds import register_kind

    for model in (
        m.PointwiseRubric,
        m.ConversationRubric,
        m.PairwiseRubric,
        m.PreferenceRubric,
        m.ClassificationRubric,
        m.InventoryRubric,
    ):
        register_kind(model)
