// SDK features the example plugin does not use, checked by tests/interop/js_sdk_plugin.sh
// with `warden call`: structuredContent alone, nothing returned, binary content, an
// async handler, the contract's error variants, progress and log.
import { Plugin, InvalidArgumentsError, NotFoundError, schema, progress, log } from 'warden-plugin';

const plugin = new Plugin({ name: 'sdk-features' });

plugin.registerTool(
  'structured_only',
  { description: 'Returns only structuredContent.', inputSchema: { n: schema.integer() }, outputSchema: { double: schema.integer() } },
  ({ n }) => ({ structuredContent: { double: 2 * n } }),
);

plugin.registerTool('nothing', { description: 'Returns nothing.' }, () => {
  progress(1, 2, 'half way');
  log('info', 'nothing to return');
  progress(2, 2);
});

plugin.registerTool('image', { description: 'Returns a 3-byte image, given as base64.' }, () => ({
  content: [
    { type: 'image', data: 'AAEC', mimeType: 'image/png' },
    { type: 'resource_link', uri: 'x://y', name: 'y' },
  ],
}));

plugin.registerTool('later', { description: 'An async handler.' }, async () => 'never');

plugin.registerTool('not_found', { description: 'Throws NotFoundError.' }, () => {
  throw new NotFoundError('no such thing');
});

plugin.registerTool('invalid', { description: 'Throws InvalidArgumentsError.' }, () => {
  throw new InvalidArgumentsError('n must be even');
});

plugin.registerTool('throws_string', { description: 'Throws a string.' }, () => {
  throw 'plain string';
});
