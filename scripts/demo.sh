#!/usr/bin/env bash
# The main job on the embedded defaults: real recorded LLM judgments (LLMBar) replayed
# through the engine into a DuckDB store, checked against the upstream figures; then
# pointwise and pairwise runs with fake jurors on our own example set. No network.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${JURYBENCH_DEMO_OUT:-demo-out}
DATA=${JURYBENCH_DATA:-../shared/datasets}
VERBOSE=${JURYBENCH_DEMO_VERBOSE:-0}
for arg in "$@"; do
  case "$arg" in
    -v | --verbose) VERBOSE=1 ;;
    *) echo "scripts/demo.sh: unknown argument '$arg' (the one it takes: --verbose, every step's output)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
export JURYBENCH_DB="$OUT/demo.duckdb"
rm -f "$JURYBENCH_DB" "$JURYBENCH_DB.wal"
# Every step's whole output goes to the log; on screen, the sections and at the end what the demo
# found (with --verbose, everything as it comes).
LOG="$OUT/demo.log"
: > "$LOG"
step() {
  if [ "$VERBOSE" = 1 ]; then
    "$@" 2>&1 | tee -a "$LOG"
  elif ! "$@" >> "$LOG" 2>&1; then
    echo "demo: this step failed: $*" >&2
    tail -n 15 "$LOG" >&2
    exit 1
  fi
}
say() { echo "$@" | tee -a "$LOG"; }

if [ -f "$DATA/llmbar/Natural/dataset.json" ]; then
  say "== LLMBar: real judge completions from $DATA/llmbar, replayed through the engine"
  step jurybench datasets import llmbar --data "$DATA"
  for spec in natural-vanilla:Natural:Vanilla natural-vanilla-norules:Natural:Vanilla_NoRules \
              natural-cot:Natural:CoT mtbench-vanilla-norules:MT-Bench:Vanilla_NoRules; do
    IFS=: read -r name subset strategy <<<"$spec"
    step jurybench score --rubric preference --jury "juries/llmbar-$name.yaml" \
      --where "dataset = 'llmbar-$subset'" --run "llmbar-$name" --no-progress
    step jurybench report preference --run "llmbar-$name" --annotator gold
    step jurybench datasets llmbar-check --run "llmbar-$name" --subset "$subset" --strategy "$strategy" --data "$DATA"
  done
  say "== Re-running one jury: everything comes from the cache, no calls"
  step jurybench score --rubric preference --jury juries/llmbar-natural-cot.yaml \
    --where "dataset = 'llmbar-Natural'" --run llmbar-natural-cot --no-progress
  say "== LLMBar: a calibrated A/B jury (logistic regression on symmetrized verdicts, held-out pairs)"
  step jurybench calibrate --run llmbar-mtbench-vanilla-norules --group-by item --name llmbar-mtbench --out "$OUT/calibration"
else
  say "== No LLMBar data at $DATA/llmbar: running on the offline example set only."
  say "   To get the real data, put LLMBar's files under DIR/llmbar/ and run: JURYBENCH_DATA=DIR make demo"
fi

if [ -f "$DATA/hanna/hanna_metric_scores_llm.csv" ]; then
  say "== HANNA: 1,056 stories, three human raters, five LLM jurors; agreement and a calibrated jury"
  step jurybench datasets import hanna --data "$DATA"
  step jurybench agreement --run hanna --boot 200
  step jurybench calibrate --run hanna --group-by meta.prompt_id --name hanna --out "$OUT/calibration"
  step jurybench calibrate apply "$OUT/calibration/hanna.json" --run hanna
else
  say "== No HANNA data at $DATA/hanna: skipping agreement and calibration on real ratings."
fi

say "== Offline example set with fake jurors (pointwise story-quality, pairwise persuasion)"
step jurybench datasets example --out "$OUT/example"
step jurybench items import "$OUT/example/items.csv" --dataset example
step jurybench pairs import "$OUT/example/pairs.csv" --dataset example
step jurybench score --rubric story-quality --where "dataset = 'example'" --run example-quality --no-progress \
  --juror fake/kind,samples=2 --juror fake/strict,invalid_rate=0.2 --juror fake/shy,refusal_rate=0.15
step jurybench score --rubric persuasion --where "dataset = 'example'" --run example-persuasion --no-progress \
  --juror fake/biased,position_bias=1 --juror fake/fair
if [ -f "$DATA/hanna/hanna_metric_scores_llm.csv" ]; then
  say "== Statistics over the store (recorded in stats_results): Friedman across HANNA's systems, its plot in $OUT/plots"
  step jurybench stats friedman --run hanna --by model --block "metadata->>'prompt_id'" --where "criterion = 'coherence'" --format csv
  step jurybench plot posthoc -o "$OUT/plots/friedman-posthoc.png"
fi
say "== Audit studies, offline on simulated models with known truth: generation, judging, statistics and plots"
say "   (the study files: jurybench demo NAME --copy DIR)"
for study in persuasion inventory culture emotion; do
  step jurybench demo "$study" --out "$OUT/studies"
done
# What the demo found, from the stores (the same figures as the steps' own reports in the log).
say "== What it found (every step's output: $LOG; make demo VERBOSE=1 prints it as it comes)"
if [ -f "$DATA/llmbar/Natural/dataset.json" ]; then
  say "LLMBar: each replayed jury's majority verdict against gold, in each order (every juror's own"
  say "figures match LLMBar's statistics.json: see the log)"
  jurybench sql "SELECT o.run_id AS jury, count(DISTINCT o.pair_id) AS pairs,
    round(avg(CASE WHEN o.presented_order = 'AB' THEN (sign(o.jury_score) = h.value)::INT END), 3) AS correct_AB,
    round(avg(CASE WHEN o.presented_order = 'BA' THEN (sign(o.jury_score) = -h.value)::INT END), 3) AS correct_BA
    FROM jury_pairwise_orders o JOIN human_labels h
      ON h.subject_kind = 'pair' AND h.subject_id = o.pair_id AND h.annotator = 'gold'
    WHERE o.run_id LIKE 'llmbar-%' GROUP BY 1 ORDER BY 1"
fi
if [ -f "$DATA/hanna/hanna_metric_scores_llm.csv" ]; then
  say "HANNA: Pearson r of the five-model jury's mean and of its best juror with the three raters' mean"
  jurybench sql "WITH h AS (SELECT subject_id, criterion, avg(value) AS human FROM human_labels
      WHERE subject_kind = 'item' GROUP BY ALL),
    r AS (SELECT s.criterion, s.juror, corr(s.juror_score, h.human) AS r FROM juror_pointwise s
      JOIN h ON h.subject_id = s.item_id AND h.criterion = s.criterion WHERE s.run_id = 'hanna' GROUP BY ALL),
    jr AS (SELECT j.criterion, corr(j.jury_score, h.human) AS r FROM jury_pointwise j
      JOIN h ON h.subject_id = j.item_id AND h.criterion = j.criterion WHERE j.run_id = 'hanna' GROUP BY ALL)
    SELECT jr.criterion, round(jr.r, 3) AS jury_r, arg_max(r.juror, r.r) AS best_juror,
      round(max(r.r), 3) AS best_juror_r FROM jr JOIN r USING (criterion) GROUP BY jr.criterion, jr.r ORDER BY 1"
fi
say "Example set: answers stored as they came (invalid answers and refusals kept, never coerced),"
say "and how often each juror's verdict flips when the pair's order is swapped"
jurybench sql "SELECT s.run_id AS run, s.juror, s.n_calls AS calls, s.n_ok AS ok, s.n_invalid AS invalid,
    s.n_refusal AS refusals, round(b.flip_rate, 2) AS flip_rate FROM run_summary s
    LEFT JOIN juror_order_bias b ON b.run_id = s.run_id AND b.juror = s.juror
    WHERE s.run_id LIKE 'example-%' ORDER BY 1, 2"
say "Audit studies (persuasion, inventory, culture, emotion): a store and figures each in $OUT/studies"
say "== Done. The store is $JURYBENCH_DB. Look at it in your browser:"
echo "   .venv/bin/jurybench view --db $JURYBENCH_DB"
echo "   (or query it: .venv/bin/jurybench sql \"SELECT * FROM run_summary\" --db $JURYBENCH_DB)"
