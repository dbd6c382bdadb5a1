import { RuntimeError } from '../../core/index.js';

/** Insert `record` into `list`, kept sorted by `compare`; one equal to a record already there is refused. */
export function insertSorted<T>(
  list: T[],
  record: T,
  compare: (left: T, right: T) => number,
  what: string,
): void {
  let index = list.length;
  while (index > 0 && compare(list[index - 1] as T, record) > 0) index--;
  if (index > 0 && compare(list[index - 1] as T, record) === 0) {
    throw new RuntimeError('invalid_input', `${what} is already recorded`);
  }
  list.splice(index, 0, record);
}

/** The list `map` holds for `key`, made empty the first time it is asked for. */
export function listFor<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}
