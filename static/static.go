// Package static embeds the page's plain ES modules and CSS; there is no
// build step.
package static

import "embed"

// FS holds app.js, the other modules, panels/*.js, the views (views/*.js
// and one folder per view), style.css and the lessons (lessons/*.json,
// docs/lessons.md).
//
//go:embed *.js *.css panels/*.js views/*.js views/*/*.js lessons/*.json
var FS embed.FS
