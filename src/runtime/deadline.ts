/**
 * Waits for `work` at most `ms`: true when it settled in time (fulfilled or rejected), false when the
 * deadline came first (the work goes on; the caller stops waiting). The timer never outlives the wait.
 *
 * @example
 * if (!(await settlesWithin(10_000, tasks.drain()))) console.warn("gave up waiting");
 */
export async function settlesWithin(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
