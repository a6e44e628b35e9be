// Sub-agents and a run-wide budget: a lead agent that delegates research to a researcher agent, a
// run started with a token budget that asks for more, and the approver's side. Shown in
// docs/guides/sub-agents.md, in excerpts that test/docs/code-blocks.test.ts keeps equal to this file;
// test/temporal/sub-agents-guide.test.ts runs it.
import type { Client } from '@temporalio/client';
import { tool, type LanguageModel } from 'ai';
import { z } from 'zod';
import { defineAgent, defineAgentTool } from '@chamvi/temporal';
import { decideApproval, listPendingApprovals, startAgentRun } from '@chamvi/temporal/client';

/** The lead and its researcher; `lookup` answers the researcher's searches (your search API). */
export function researchTeam(
  models: { lead: LanguageModel; researcher: LanguageModel },
  lookup: (q: string) => string,
) {
  const researcher = defineAgent({
    name: 'researcher',
    model: models.researcher,
    instructions: 'Search, then answer the question in two sentences with your sources.',
    tools: {
      search: tool({
        description: 'Searches the archive.',
        inputSchema: z.object({ query: z.string() }),
        execute: ({ query }) => lookup(query),
      }),
    },
    maxSteps: 5,
  });
  return defineAgent({
    name: 'lead',
    model: models.lead,
    instructions: 'Split the question into parts, research each one, then write the answer.',
    tools: {
      // Each call is a child workflow; its id derives from this run and the call.
      research: defineAgentTool(researcher, { description: 'Researches one question and reports back.' }),
    },
  });
}

/** Starts a lead run whose whole tree may use 200k tokens; past them it asks for 100k more. */
export async function startResearch(client: Client, question: string, taskQueue: string) {
  return startAgentRun(client, {
    agent: 'lead',
    prompt: question,
    taskQueue,
    budget: { tokens: 200_000, onExhausted: 'ask', raise: { tokens: 100_000 }, askTimeout: '1 day' },
  });
}

/** The approver's side: adds the raise the run asks for, if it asks. */
export async function approveMoreBudget(client: Client, workflowId: string, approver: string) {
  const ask = (await listPendingApprovals(client, workflowId)).find((p) => p.toolName === 'chamvi.budget');
  if (ask === undefined) return undefined;
  return decideApproval(client, workflowId, { toolCallId: ask.toolCallId, approved: true, approver });
}
