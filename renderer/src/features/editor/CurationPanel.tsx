import { useEffect, useState } from 'react';
import { backend, log } from '../../store/app';
import { forkEnvironment, openExport } from './open';
import type { EditorSession } from './session';
import { ALL_SKILLS } from '../../../../core/api/skills';
import { errorMessage } from '../../../../core/api';

function fail(what: string, e: unknown): void {
  log('error', 'editor', `${what}: ${errorMessage(e)}`);
}

/** Seed flag, tags, rating, skill and notes: what a researcher says about an environment. */
export function CurationPanel({ session }: { session: EditorSession }) {
  const env = session.env;
  const [notes, setNotes] = useState(env.notes);
  const [tagInput, setTagInput] = useState('');
  const [skill, setSkill] = useState(env.skill ?? '');
  useEffect(() => setNotes(env.notes), [env.notes]);
  useEffect(() => setSkill(env.skill ?? ''), [env.skill]);

  const refresh = async () => {
    const { env: fresh } = await backend().call('editor.open', { envId: env.id });
    session.env = { ...session.env, seed: fresh.seed, tags: fresh.tags, rating: fresh.rating, notes: fresh.notes, skill: fresh.skill, name: fresh.name };
    session.setVersions(fresh.versions);
  };
  const update = async (patch: { notes?: string; rating?: number | null; skill?: string | null }) => {
    try {
      await backend().call('memory.update', { id: env.id, ...patch });
      await refresh();
    } catch (e) {
      fail('Could not update the environment', e);
    }
  };
  const addTags = async () => {
    const add = tagInput
      .split(/[\s,]+/)
      .map((t) => t.trim())
      .filter(Boolean);
    if (!add.length) return;
    try {
      await backend().call('memory.tag', { ids: [env.id], add, remove: [] });
      setTagInput('');
      await refresh();
    } catch (e) {
      fail('Could not tag', e);
    }
  };

  return (
    <section className="curation" aria-label="Curation" data-testid="curation">
      <div className="pane-title">Curation</div>
      <label className="row">
        <input
          type="checkbox"
          aria-label="Seed"
          checked={env.seed}
          onChange={async (e) => {
            try {
              await backend().call('memory.setSeed', { ids: [env.id], seed: e.target.checked });
              await refresh();
            } catch (err) {
              fail('Could not change the seed flag', err);
            }
          }}
        />
        Seed environment
      </label>
      <div className="tags" data-testid="tags">
        {env.tags.map((t) => (
          <span key={t} className="tag-chip">
            {t}
            <button
              aria-label={`Remove tag ${t}`}
              onClick={async () => {
                try {
                  await backend().call('memory.tag', { ids: [env.id], add: [], remove: [t] });
                  await refresh();
                } catch (e) {
                  fail('Could not remove the tag', e);
                }
              }}
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
        <select aria-label="Rating" value={env.rating ?? ''} onChange={(e) => void update({ rating: e.target.value === '' ? null : Number(e.target.value) })}>
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
          onBlur={() => skill !== (env.skill ?? '') && void update({ skill: skill.trim() || null })}
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
        onBlur={() => notes !== env.notes && void update({ notes })}
      />
      <div className="row">
        <button onClick={() => void forkEnvironment(session)}>Fork as new environment</button>
        <button onClick={() => openExport()}>Export seed set…</button>
      </div>
    </section>
  );
}
