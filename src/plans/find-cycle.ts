/**
 * The first dependency cycle a depth-first walk meets, starting from each step in plan order and following
 * dependencies in plan order, as indices `[a, b, …, a]` (a depends on b …); `undefined` for a DAG.
 */
export function findCycle(dependencies: readonly (readonly number[])[]): number[] | undefined {
  // 0: not visited, 1: on the current path, 2: finished (no cycle through it).
  const state = new Uint8Array(dependencies.length);
  for (let start = 0; start < dependencies.length; start += 1) {
    if (state[start] !== 0) continue;
    // Iterative, so a long chain of steps cannot overflow the call stack.
    const stack: { node: number; next: number }[] = [{ node: start, next: 0 }];
    state[start] = 1;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as { node: number; next: number };
      const to = dependencies[frame.node]?.[frame.next];
      if (to === undefined) {
        state[frame.node] = 2;
        stack.pop();
        continue;
      }
      frame.next += 1;
      if (state[to] === 1) {
        const from = stack.findIndex((entry) => entry.node === to);
        return [...stack.slice(from).map((entry) => entry.node), to];
      }
      if (state[to] === 0) {
        state[to] = 1;
        stack.push({ node: to, next: 0 });
      }
    }
  }
  return undefined;
}
