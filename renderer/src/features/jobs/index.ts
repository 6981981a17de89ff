import './jobs.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { registerSidePanel } from '../../views/sidePanels';
import { lazyView, registerView } from '../../views/registry';
import { JobsPanel } from './JobsPanel';
import { useJobs } from './store';

export function registerJobsFeature(): void {
  registerSidePanel('jobs', JobsPanel);
  registerView('job', lazyView(() => import('./JobView').then((m) => m.JobView)));
  useCommands.getState().register([
    {
      id: 'jobs.new',
      category: 'Jobs',
      title: 'Launch a Job…',
      run: () => {
        const wb = useWorkbench.getState();
        if (wb.activity !== 'jobs' || !wb.sideVisible) wb.setActivity('jobs');
        useJobs.getState().setLaunchOpen(true);
      },
    },
  ]);
}
