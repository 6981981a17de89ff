import { useEffect, useState } from 'react';
import { forkEnvironment, openExport } from './open';
import type { EditorSession } from './session';
import { ALL_SKILLS } from '../../../../core/api/skills';
import { environments, useEnvironment } from '../../store/environments';

/** Seed flag, tags, rating, skill and notes: what a researcher says about an environment. */
export function CurationPanel({ session }: { session: EditorSession }) {
  // What the library holds now (changed here or in any other view), else what the tab opened with.
  const env = useEnvironment(session.env.id, session.env).env ?? session.env;
  const [notes, setNotes] = useState(env.notes);
  const [tagInput, setTagInput] = useState('');
  const [skill, setSkill] = useState(env.skill ?? '');
  useEffect(() => setNotes(env.notes), [env.notes]);
  useEffect(() => setSkill(env.skill ?? ''), [env.skill]);

  const update = (patch: { notes?: string; rating?: number | null; skill?: string | null }) => void environments.update(env.id, patch);
  const addTags = async () => {
    const add = tagInput
      .split(/[\s,]+/)
      .map((t) => t.trim())
      .filter(Boolean);
    if (!add.length) return;
    if (await environments.tag([env.id], { add })) setTagInput('');
  };

  return (
    <section className="curation" aria-label="Curation" data-testid="curation">
      <div className="pane-title">Curation</div>
      <label className="row">
        <input
          type="checkbox"
          aria-label="Seed"
          checked={env.seed}
          onChange={(e) => void environments.setSeed([env.id], e.target.checked)}
        />
        Seed environment
      </label>
      <div className="tags" data-testid="tags">
        {env.tags.map((t) => (
          <span key={t} className="tag-chip">
            {t}
            <button
              aria-label={`Remove tag ${t}`}
              onClick={() => void environments.tag([env.id], { remove: [t] })}
            >
              ×
            </button>
          </span>
        ))}
        <input
          aria-label="Add tags"
          placeholder="add tags…"
          value={tagInput}
          onChange={(e) => setTagInput(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') void addTags();
          }}
        />
      </div>
      <label className="row">
        Rating
        <select aria-label="Rating" value={env.rating ?? ''} onChange={(e) => update({ rating: e.target.value === '' ? null : Number(e.target.value) })}>
          <option value="">–</option>
          {[0, 1, 2, 3, 4, 5].map((n) => (
            <option key={n} value={n}>
              {'★'.repeat(n) || '0'}
            </option>
          ))}
        </select>
      </label>
      <label className="row">
        Skill
        <input
          aria-label="Skill"
          list="editor-skills"
          value={skill}
          onChange={(e) => setSkill(e.target.value)}
          onBlur={() => skill !== (env.skill ?? '') && update({ skill: skill.trim() || null })}
        />
        <datalist id="editor-skills">
          {ALL_SKILLS.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      </label>
      <textarea
        aria-label="Notes"
        placeholder="Notes"
        value={notes}
        onChange={(e) => setNotes(e.target.value)}
        onBlur={() => notes !== env.notes && update({ notes })}
      />
      <div className="row">
        <button onClick={() => void forkEnvironment(session)}>Fork as new environment</button>
        <button onClick={() => openExport()}>Export seed set…</button>
      </div>
    </section>
  );
}
