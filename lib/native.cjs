'use strict';
// The generated napi loader, in one place: every facade module reaches the addon through here.
module.exports = require('../binding.js');
