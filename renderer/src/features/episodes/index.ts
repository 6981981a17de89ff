import './episodes.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { registerSidePanel } from '../../views/sidePanels';
import { registerView } from '../../views/registry';
import { registerEnvAction } from '../../views/envActions';
import { openLlm, openRegret } from './store';
import { EpisodesPanel } from './EpisodesPanel';
import { EpisodeView } from './EpisodeView';
import { PairView } from './PairView';
import { RegretView } from './RegretView';
import { LlmView } from './LlmView';

export function registerEpisodesFeature(): void {
  registerEnvAction({ id: 'regret', label: 'Hint regret', run: (e) => openRegret(e.hash, e.name) });
  registerEnvAction({ id: 'llm', label: 'Play with a model', run: (e) => openLlm(e.hash, e.name) });
  registerSidePanel('episodes', EpisodesPanel);
  registerView('episode', EpisodeView);
  registerView('episode-pair', PairView);
  registerView('episode-regret', RegretView);
  registerView('episode-llm', LlmView);
  useCommands.getState().register([
    {
      id: 'episodes.show',
      category: 'Episodes',
      title: 'Show Episodes',
      run: () => {
        const wb = useWorkbench.getState();
        if (wb.activity !== 'episodes' || !wb.sideVisible) wb.setActivity('episodes');
      },
    },
  ]);
}
