"""Human annotations and agreement between jurors, the jury and humans."""

from jurybench.annotations._preference import PreferenceReport, preference_accuracy

__all__ = ["PreferenceReport", "preference_accuracy"]
