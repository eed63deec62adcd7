// No function over 80 lines in the code that starts Blender and runs the farm's tasks (blender/,
// service/worker/): past that, a render path stops fitting on a screen and its steps stop having
// names. Counted by the TypeScript compiler: the lines of a function's body, braces included.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_LINES = 80;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...(await sourceFiles(rel)));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Functions of `text` whose body spans more than `max` lines, as `name:line (n lines)`. */
function longFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const body = node.body as ts.Node;
      const first = src.getLineAndCharacterOfPosition(body.getStart(src)).line;
      const last = src.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first + 1;
      const named = node.name ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name : undefined);
      const name = named && ts.isIdentifier(named) ? named.text : '(anonymous)';
      if (lines > max) long.push(`${file}:${first + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return long;
}

describe('function length', () => {
  it.each(['blender', 'service/worker'])(`no function under %s/ is over ${MAX_LINES} lines`, async (dir) => {
    const long: string[] = [];
    for (const file of await sourceFiles(dir))
      long.push(...longFunctions(file, await readFile(path.join(root, file), 'utf8'), MAX_LINES));
    expect(long).toEqual([]);
  });

  it('measures what it checks (the count itself works)', () => {
    const body = Array.from({ length: 5 }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const text = `function f() {\n${body}\n}\nconst g = () => {\n${body}\n};\nclass C { m() {\n${body}\n} }\n`;
    expect(longFunctions('x.ts', text, 6)).toEqual(['x.ts:1 f (7 lines)', 'x.ts:8 g (7 lines)', 'x.ts:15 m (7 lines)']);
    expect(longFunctions('x.ts', text, 7)).toEqual([]);
  });
});
