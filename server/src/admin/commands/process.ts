import { ApiError } from '../../http/errors';
import { type Command, valueOptions } from '../command';

export const processCommands: Command[] = [
  {
    name: 'process create',
    options: valueOptions('tenant', 'org', 'file'),
    prepare: (args) => {
      args.text('tenant');
      args.text('org');
      args.text('file');
      return async () => {
        throw new ApiError(
          501,
          'NOT_AVAILABLE',
          'process definitions arrive with the dossier workflow; not available yet',
        );
      };
    },
  },
];
