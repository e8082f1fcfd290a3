#!/usr/bin/env bash
# The main job on the embedded defaults: real recorded LLM judgments (LLMBar) replayed
# through the engine into a DuckDB store, checked against the upstream figures; then
# pointwise and pairwise runs with fake jurors on our own example set. No network.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${JURYBENCH_DEMO_OUT:-demo-out}
DATA=${JURYBENCH_DATA:-../shared/datasets}
mkdir -p "$OUT"
export JURYBENCH_DB="$OUT/demo.duckdb"
rm -f "$JURYBENCH_DB" "$JURYBENCH_DB.wal"

if [ -f "$DATA/llmbar/Natural/dataset.json" ]; then
  echo "== LLMBar: real judge completions from $DATA/llmbar, replayed through the engine"
  jurybench datasets import llmbar --data "$DATA"
  for spec in natural-vanilla:Natural:Vanilla natural-vanilla-norules:Natural:Vanilla_NoRules \
              natural-cot:Natural:CoT mtbench-vanilla-norules:MT-Bench:Vanilla_NoRules; do
    IFS=: read -r name subset strategy <<<"$spec"
    jurybench score --rubric preference --jury "juries/llmbar-$name.yaml" \
      --where "dataset = 'llmbar-$subset'" --run "llmbar-$name" --no-progress
    jurybench report preference --run "llmbar-$name" --annotator gold
    jurybench datasets llmbar-check --run "llmbar-$name" --subset "$subset" --strategy "$strategy" --data "$DATA"
  done
  echo "== Re-running one jury: everything comes from the cache, no calls"
  jurybench score --rubric preference --jury juries/llmbar-natural-cot.yaml \
    --where "dataset = 'llmbar-Natural'" --run llmbar-natural-cot --no-progress
  jurybench sql "SELECT juror, n_valid, round(flip_rate, 3) AS flip_rate FROM juror_order_bias ORDER BY flip_rate"
  echo "== LLMBar: a calibrated A/B jury (logistic regression on symmetrized verdicts, held-out pairs)"
  jurybench calibrate --run llmbar-mtbench-vanilla-norules --group-by item --name llmbar-mtbench --out "$OUT/calibration"
else
  echo "== No LLMBar data at $DATA/llmbar: running on the offline example set only."
  echo "   To get the real data, put LLMBar's files under DIR/llmbar/ and run: JURYBENCH_DATA=DIR make demo"
fi

if [ -f "$DATA/hanna/hanna_metric_scores_llm.csv" ]; then
  echo "== HANNA: 1,056 stories, three human raters, five LLM jurors; agreement and a calibrated jury"
  jurybench datasets import hanna --data "$DATA"
  jurybench agreement --run hanna --boot 200
  jurybench calibrate --run hanna --group-by meta.prompt_id --name hanna --out "$OUT/calibration"
  jurybench calibrate apply "$OUT/calibration/hanna.json" --run hanna
  jurybench sql "SELECT criterion, round(avg(score), 3) AS mean_calibrated, round(avg(n_imputed), 3) AS imputed_per_item FROM calibrated_scores WHERE run_id = 'hanna' GROUP BY 1 ORDER BY 1"
else
  echo "== No HANNA data at $DATA/hanna: skipping agreement and calibration on real ratings."
fi

echo "== Offline example set with fake jurors (pointwise story-quality, pairwise persuasion)"
jurybench datasets example --out "$OUT/example"
jurybench items import "$OUT/example/items.csv" --dataset example
jurybench pairs import "$OUT/example/pairs.csv" --dataset example
jurybench score --rubric story-quality --where "dataset = 'example'" --run example-quality --no-progress \
  --juror fake/kind,samples=2 --juror fake/strict,invalid_rate=0.2 --juror fake/shy,refusal_rate=0.15
jurybench score --rubric persuasion --where "dataset = 'example'" --run example-persuasion --no-progress \
  --juror fake/biased,position_bias=1 --juror fake/fair
jurybench sql "SELECT juror, n_calls, n_ok, n_invalid, n_refusal FROM run_summary WHERE run_id = 'example-quality'"
jurybench sql "SELECT criterion, round(avg(jury_mean), 2) AS jury_mean, sum(n_invalid) AS invalid, sum(n_refusal) AS refusals FROM jury_pointwise WHERE run_id = 'example-quality' GROUP BY 1 ORDER BY 1"
jurybench sql "SELECT juror, round(flip_rate, 2) AS flip_rate FROM juror_order_bias ORDER BY juror" --format csv
echo "== Statistics over the store (recorded in stats_results) and plots in $OUT/plots"
jurybench stats directional --run example-persuasion --format csv | head -6
jurybench stats gap --run example-persuasion --level juror --boot 500
jurybench stats consistency --run example-persuasion
jurybench plot directional -o "$OUT/plots/directional.png"
jurybench plot gap -o "$OUT/plots/gap.png"
if [ -f "$DATA/hanna/hanna_metric_scores_llm.csv" ]; then
  jurybench stats friedman --run hanna --by model --block "metadata->>'prompt_id'" --where "criterion = 'coherence'" --format csv | head -4
  jurybench plot posthoc -o "$OUT/plots/friedman-posthoc.png"
fi
echo "== Audit studies, offline on simulated models with known truth (study files: jurybench demo NAME --copy DIR)"
for study in persuasion inventory culture emotion; do
  jurybench demo "$study" --out "$OUT/studies"
done
echo "== Done. The store is $JURYBENCH_DB. Look at it in your browser:"
echo "   .venv/bin/jurybench view --db $JURYBENCH_DB"
echo "   (or query it: .venv/bin/jurybench sql \"SELECT * FROM run_summary\" --db $JURYBENCH_DB)"
