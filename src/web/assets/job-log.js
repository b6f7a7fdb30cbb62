// The job page's log (issue 33 item 4): folds the runner's sections on a click on their header,
// and while the job runs, appends the lines the server renders since the last offset
// (/-/jobs/:id/trace.json, HTML escaped on the server) and keeps the view at the end when it was there.
(function () {
  'use strict';
  var log = document.getElementById('job-log');
  var follow = document.getElementById('log-follow');
  var state = document.getElementById('log-state');
  if (!log) return;

  function applyFolds() {
    var collapsed = {};
    var headers = log.querySelectorAll('.section-header');
    for (var i = 0; i < headers.length; i++) {
      var h = headers[i];
      h.setAttribute('aria-expanded', h.classList.contains('collapsed') ? 'false' : 'true');
      if (h.classList.contains('collapsed')) collapsed[h.getAttribute('data-section')] = true;
    }
    var lines = log.querySelectorAll('.log-line[data-sections]');
    for (var j = 0; j < lines.length; j++) {
      var names = lines[j].getAttribute('data-sections').split(' ');
      var hide = false;
      for (var k = 0; k < names.length; k++) if (collapsed[names[k]]) hide = true;
      lines[j].hidden = hide;
    }
  }

  function toggle(header) {
    header.classList.toggle('collapsed');
    applyFolds();
  }

  log.addEventListener('click', function (e) {
    var header = e.target.closest ? e.target.closest('.section-header') : null;
    if (header) toggle(header);
  });
  log.addEventListener('keydown', function (e) {
    var header = e.target.closest ? e.target.closest('.section-header') : null;
    if (header && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      toggle(header);
    }
  });
  function makeFocusable() {
    var headers = log.querySelectorAll('.section-header:not([tabindex])');
    for (var i = 0; i < headers.length; i++) {
      headers[i].setAttribute('tabindex', '0');
      headers[i].setAttribute('role', 'button');
    }
  }
  makeFocusable();
  applyFolds();

  if (!follow || follow.getAttribute('data-active') !== '1') return;
  var url = follow.getAttribute('data-url');
  var offset = follow.getAttribute('data-offset');
  var line = follow.getAttribute('data-line');
  var sections = follow.getAttribute('data-sections') || '';
  var delay = 1500;

  function atEnd() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  }

  function poll() {
    var q = '?offset=' + encodeURIComponent(offset) + '&line=' + encodeURIComponent(line) + '&sections=' + encodeURIComponent(sections);
    fetch(url + q, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (data) {
        var stick = atEnd();
        if (data.html) {
          log.insertAdjacentHTML('beforeend', data.html);
          makeFocusable();
          applyFolds();
          if (stick) window.scrollTo(0, document.body.scrollHeight);
        }
        offset = String(data.offset);
        line = String(data.line);
        sections = data.sections || '';
        if (data.complete) {
          if (state) state.textContent = 'The job finished: ' + (data.status === 'success' ? 'passed' : data.status) + '.';
          var badge = document.querySelector('.job-header .status');
          if (badge) {
            badge.className = 'status status-' + data.status;
            badge.textContent = data.status === 'success' ? 'passed' : data.status;
          }
          // The buttons were for the running job: offer the page again for the finished job's actions.
          var actions = document.querySelector('.job-header .actions');
          if (actions) {
            var again = document.createElement('a');
            again.href = window.location.pathname;
            again.textContent = 'Reload for the finished job\u2019s actions';
            actions.replaceChildren(again);
          }
          return;
        }
        setTimeout(poll, delay);
      })
      .catch(function () {
        delay = Math.min(delay * 2, 30000);
        setTimeout(poll, delay);
      });
  }
  setTimeout(poll, delay);
})();
