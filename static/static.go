// Package static embeds the page's plain ES modules and CSS; there is no
// build step.
package static

import "embed"

// FS holds app.js, the other modules, panels/*.js, the views (views/*.js
// and one folder per view) and style.css.
//
//go:embed *.js *.css panels/*.js views/*.js views/*/*.js
var FS embed.FS
