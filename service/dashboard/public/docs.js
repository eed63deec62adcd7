// The API reference: swagger-ui (served from the service's own node_modules, no CDN) rendering
// the service's OpenAPI document. "Try it out" calls go to this origin with an API key entered
// in Authorize, or with the dashboard's session cookie when signed in there.
/* global SwaggerUIBundle */
window.addEventListener('DOMContentLoaded', () => {
  window.ui = SwaggerUIBundle({
    url: '/api/external/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
