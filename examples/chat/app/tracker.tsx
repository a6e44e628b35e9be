'use client';
import { useEffect, useState } from 'react';

interface Issue {
  readonly number: number;
  readonly title: string;
  readonly comments: number;
}

/** The tracker the agent comments on, beside the chat: its issues and their comment counts. */
export function Tracker() {
  const [issues, setIssues] = useState<Issue[]>([]);
  useEffect(() => {
    const load = () =>
      fetch('/api/tracker')
        .then((r) => (r.ok ? (r.json() as Promise<Issue[]>) : []))
        .then(
          (all) => setIssues([...all].sort((a, b) => a.number - b.number)),
          () => undefined,
        );
    void load();
    const timer = setInterval(() => void load(), 1000);
    return () => clearInterval(timer);
  }, []);
  return (
    <aside className="tracker">
      <h2>acme/widgets</h2>
      <ul>
        {issues.map((issue) => (
          <li key={issue.number}>
            #{issue.number} {issue.title} <span data-testid={`issue-${issue.number}-comments`}>{issue.comments}</span>{' '}
            comment
            {issue.comments === 1 ? '' : 's'}
          </li>
        ))}
      </ul>
    </aside>
  );
}
