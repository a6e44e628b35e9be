/**
 * Progress for a long step: returns a callback taking the seconds waited so far; it prints
 * "  … <label> (Ns)" at most every `everySeconds` (rewriting one line on a terminal).
 */
export function progress(label: string, everySeconds = 3): (seconds: number) => void {
  let last = 0;
  return (seconds: number) => {
    if (seconds - last < everySeconds) return;
    last = seconds;
    if (process.stdout.isTTY) process.stdout.write(`\r  … ${label} (${seconds}s)`);
    else process.stdout.write(`  … ${label} (${seconds}s)\n`);
  };
}

/** Ends a progress line on a terminal. */
export function progressDone(): void {
  if (process.stdout.isTTY) process.stdout.write('\r\x1b[K');
}

/** Prints a step heading with the elapsed time since `start`. */
export function step(start: number, text: string): void {
  const seconds = ((Date.now() - start) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds}s] ${text}\n`);
}
