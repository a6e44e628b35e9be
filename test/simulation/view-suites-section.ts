// The part of docs/reliability.md's "Deterministic simulation" section about the conversation
// and run-stream suites, beside the effect protocol's (report-section.ts).
import type { SimulationRun } from './report-section.js';

/** The suites' description, and the numbers of the last recorded run of each. */
export function viewSuitesSection(run: SimulationRun | undefined): string[] {
  const lines = [
    '### The conversation store and the run streams',
    '',
    '`npm run sim -- --suite conversation` and `--suite stream` (both run by default) hold the parts around the',
    'protocol to the same standard, with the real code and a virtual clock.',
    '',
    'The conversation suite runs 1-3 workflows whose executions share a run id (a custom run id reused, with the same',
    'or another prompt), each a loop of model steps through the real `stepConversation` (its load and its append,',
    "closing the run's conversation on the final answer or the step limit) and tool calls through the real",
    '`callOptionsFor` (`options.messages`), on 1-3 workers with their own `ConversationLog` and `ConversationCache`',
    '(none, small, default; lost on a restart), over one real `MemoryConversationStore` or SQLite store (in memory,',
    "`julianday('now')` on the virtual clock). Attempts die with their worker, fail at the provider, or outlive the",
    'start-to-close timeout and store their answer late beside the taken retry (a zombie, possibly with another',
    'answer and another end); a reset terminates an execution (its step in flight lands late: the old branch) and',
    'starts another at an earlier step; continue-as-new hands over; approvals wait longer than the retention; `prune`',
    'runs with any limit at any moment; the client reads with `loadConversation` at and after the close. Someone',
    "with the database's credentials edits an entry's JSON, truncates it, deletes a row, plants a forged row under",
    "the key an execution writes next, points a parent at a descendant or itself (a cycle), or at another chain's",
    'entry. Invariants: every load (model step, tool call, client) returns exactly the messages the run wrote, or a',
    "named error (history-genuine, named-error); no load hangs (chain-walk-bounded: the memory store's walk is",
    'guarded, the SQLite walk of a cycle is probed once in a child process that is killed when it does not end); a',
    'load of an untouched, unpruned chain succeeds (no-false-alarm); a prune never deletes an entry of an execution',
    'that is running and has written (open-never-pruned).',
    '',
    'The stream suite runs 1-2 workflows under one or two run ids, each model step attempt writing through a real',
    '`RunStreamWriter` (text, reasoning and tool-input parts, each carrying a unique token) to one real',
    '`MemoryRunStreamStore` or `SqliteRunStreamStore` behind a connection whose appends are slow, held forever (a',
    'black-holed database, for a while or for good), refused, committed with a late or lost answer; attempts fail',
    'mid-stream or outlive their timeout and write beside their retry; resets and continue-as-new start new',
    'executions; approvals outlast the retention; `prune` at any moment; the process closes the store while readers',
    'wait. Readers follow a workflow with the real `readRunStream`, and pages with the real `runUIMessageStream`',
    "(a stand-in Temporal client, whose describe of a run tells its start: a reset's run starts at the reset), from",
    'the start, from any cursor, from a forged one (NaN, -1, `"abc"`, 1.5, Infinity), closing and resuming after',
    'their last cursor (sometimes after more than the retention). Invariants:',
    'cursors only grow (store and readers); a reader reads every batch of its workflow committed after its cursor',
    "while it reads, once, in commit order, and none of another workflow's; a page shows nothing of another",
    'workflow, nothing twice, and every part of the attempts Temporal took that it read before anything later of',
    'its workflow; a resumed page gets no second `start`; a forged cursor gets a clear error and nothing else; no',
    "reader busy-loops; closing the store releases every reader within a second; a step attempt's `close` returns",
    'within the documented budget whatever the store does, and a writer warns at most once.',
    '',
    'The budget suite (`--suite budget`) runs a tree of 1-10 runs (a top run, up to 3 sub-agents, up to 2 of',
    'theirs), each with 1-4 model steps of random tokens, under a token budget of 20-120 % of what the tree would',
    'use, counted by the real `BudgetLedger` of the top run: each sub-agent asks before each step with its own',
    'count and sends its last count when it ends; the counts reach the top run in any order across senders (in',
    'order from one sender, as Temporal delivers signals), the top run continues as new between its steps, budget',
    'approvals raise the limit or are denied, and a forger sends counts from workflow ids outside the tree,',
    'malformed ones, lower ones, and higher ones. Invariants: the count never goes down (count-never-decreases);',
    "every run of the tree ends (tree-ends); only each run's last step can pass the limit (overshoot-bounded); at",
    'the end the top run has counted exactly the tokens the tree took, unless a forged higher count was accepted',
    '(count-exact), and never fewer (never-undercounts).',
    '',
  ];
  const suites = run?.suites;
  if (suites === undefined) return lines;
  const numbers = Object.entries(suites)
    .map(([name, s]) => {
      const counts = Object.entries(s.counts)
        .filter(([k]) => name !== 'effects' || !k.startsWith('documented '))
        .map(([k, n]) => `${n.toLocaleString('en-US')} ${k}`)
        .join(', ');
      return `${name}: **${s.seeds.toLocaleString('en-US')} seeds, ${s.violations} violations**, ${s.seconds} s (${s.cpuSeconds} s of CPU)${counts === '' ? '' : `, ${counts}`}`;
    })
    .join('; ');
  const viewViolations = Object.entries(suites)
    .filter(([name]) => name !== 'effects')
    .reduce((n, [, s]) => n + s.violations, 0);
  lines.push(
    `By suite, in the last recorded run (\`${run?.command ?? ''}\`, commit ${run?.commit ?? '?'}): ${numbers}.${viewViolations === 0 ? '' : ' Every violation of the conversation and stream suites there is one of the two findings below (open on that commit).'}`,
    '',
  );
  return lines;
}

/** What the conversation and stream suites found before the fixes of issue 23 (measured by hand). */
export function viewSuitesOnMain(): string[] {
  return [
    'Before the fixes of issue 23 (664da0a, 10 000 seeds of each suite) the conversation suite found 2 185',
    'violations in 1 402 seeds: history-genuine 870 (365 seeds: an edited, planted or re-parented row reached the',
    'model, a tool call or the client, item 1), named-error 342 (271: a truncated entry failed with a bare',
    '`SyntaxError`, item 1), chain-walk-bounded 701 (552: a parent cycle walked forever, item 2), open-never-pruned',
    "272 (268: another execution of the run closed it, item 3; one, seed 4727, a zombie attempt of the execution's",
    'own step storing a final answer late); no-false-alarm none. The stream suite found 20 979 in 5 910 seeds:',
    'step-latency-bounded 8 880 (2 731 seeds, item 6), cursors-only-grow 2 330 (2 174) and reader-sees-every-batch',
    '1 484 (1 128, item 7), reader-sees-only-its-run 1 258 (912), page-shows-its-run 1 994 (1 170) and',
    'page-shows-every-batch 1 281 (1 036, item 8), forged-cursor-refused 1 810 (1 706, item 10), reader-never-spins',
    '108 (108: `readRunStream` from -1 busy-loops on promise callbacks before the first batch, freezing the',
    'process), close-releases-readers 1 207 (710, item 11), page-no-duplicates 627 (391: an append committed with',
    'its answer lost is sent again, and the page shows its parts twice).',
    '',
    'After the fixes, the invariants catch each mechanism when it is taken away (measured by hand on a82110c; each',
    'has no violation with the mechanism in place): no hash check in `verifiedChain`, 218 history-genuine and 96',
    "named-error in 3 000 seeds; the memory store's walk without its visited set, 193 chain-walk-bounded; one",
    'open/closed flag per run id again (the execution ignored), 68 open-never-pruned; `RunStreamWriter.close`',
    'without its budget, 1 806 step-latency-bounded in 2 000 seeds; the memory stream store numbering from its last',
    'stored batch again, 384 cursors-only-grow, 260 reader-sees-every-batch, 151 page-shows-every-batch; its streams',
    'keyed by run id only, 299 page-shows-its-run, 199 reader-sees-only-its-run; `close` not waking its readers, 222',
    'close-releases-readers; `readRunStream` without its cursor check, 221 forged-cursor-refused, 27',
    'reader-never-spins.',
    '',
    'A part shown twice because the store committed a batch whose answer was lost (the writer sent the parts again',
    "with its next write) is counted as documented, lost-answer-resent, when the history's ledger proves it. Two",
    'bugs were found after the fixes, each with its seeds in test/simulation/view-regression-seeds.ts, and both are',
    "fixed. A zombie attempt of a model step that stored a final answer late closed its own execution's hold on the",
    'conversation while the execution went on (open-never-pruned, seeds 4727, 6633 and 8988: 51 seeds in 100 000),',
    "fixed in 0aea3b7: the store keeps the activity and attempt of each execution's latest write, and a write of an",
    'older one changes nothing but its entries; with the order ignored (every write the latest) 20 000 seeds have 10',
    "open-never-pruned. A reset's old branch whose first batch landed after the new execution's was taken by the",
    'page for a newer execution, which then hid the rest of the new one (page-shows-every-batch, seeds 676 and 150:',
    '96 seeds in 100 000 on 7da9cbc), fixed in e18b47f: the page orders executions by their start as Temporal',
    'reports it; with executions ordered by arrival again, 18 page-shows-every-batch in 13 of 10 000 seeds.',
    '',
  ];
}
