import { useState } from 'react';
import { CodeEditor } from '../monaco/CodeEditor';
import type { ViewProps } from './registry';

const starter = `"""A scratch buffer: nothing here is saved. Open an environment from the Library to edit one."""


class ScratchEnv:
    def reset(self, seed=None):
        return "Guess a number between 1 and 10.", {}

    def step(self, action):
        return "Done.", 1.0, True, False, {}
`;

export function ScratchView(_props: ViewProps<'scratch'>) {
  const [text, setText] = useState(starter);
  return (
    <div className="fill column">
      <div className="toolbar muted">Scratch (Python) · {text.split('\n').length} lines · not saved</div>
      <div className="fill">
        <CodeEditor value={text} onChange={setText} ariaLabel="Scratch Python editor" />
      </div>
    </div>
  );
}
