/*
 * Customer leads snippet, served by the gateway at /leads.js. Include it on every checkout page:
 *   <script src="https://<gateway>/leads.js" data-key="pk_live_..."></script>
 * It keeps one session id per checkout (sessionStorage: one per tab, gone when the tab closes), records each page
 * it runs on as a scan, and writes the lead with the publishable key once it has an e-mail. Pass the session id
 * to the card submit as partnerSession, so the payment marks the lead paid:
 *   ServiceLeads.sessionId()            the checkout's session id
 *   ServiceLeads.identify({ email, first_name, ... })   saves contact fields and writes the lead (a Promise); fields
 *                                       the gateway refuses (422) are not kept, so later writes of the tab still pass;
 *                                       the rejection's error has `status`, `code` and `details` (one `field: problem`
 *                                       entry per bad field) to show the shopper; a field given as null or undefined
 *                                       is left out
 *   ServiceLeads.scan(page)             records another page (defaults to the current path)
 *   ServiceLeads.ready                  the write of this page's scan (resolves to the lead, or null before an e-mail)
 *   ServiceLeads.reset()                after the payment: the next checkout in this tab is a lead of its own (a new
 *                                       session id, no scans or contact fields); answers the new session id
 */
(function () {
  'use strict';
  var script = document.currentScript;
  var key = script && script.getAttribute('data-key');
  var endpoint = new URL('/api/public/customer-leads', script ? script.src : location.href).href;
  var STORE = 'service_leads';

  function load() {
    try {
      return JSON.parse(sessionStorage.getItem(STORE)) || {};
    } catch (e) {
      return {};
    }
  }
  function save(state) {
    sessionStorage.setItem(STORE, JSON.stringify(state));
  }
  function newSessionId() {
    // 36 characters: within the 50 a card submit keeps as partnerSession.
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }

  var state = load();
  if (!state.session_id) state.session_id = newSessionId();
  state.scans = state.scans || [];
  state.contact = state.contact || {};
  save(state);

  function reset() {
    state = { session_id: newSessionId(), scans: [], contact: {} };
    save(state);
    return state.session_id;
  }

  function post() {
    if (!state.contact.email) return Promise.resolve(null); // a lead needs an e-mail; scans wait until then
    var body = { session_id: state.session_id, scans: state.scans };
    for (var name in state.contact) body[name] = state.contact[name];
    return fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-lead-key': key },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (answer.ok) return answer.data;
        var error = new Error(answer.error.code + ': ' + answer.error.message + (answer.error.details ? ' (' + answer.error.details.join('; ') + ')' : ''));
        error.status = response.status;
        error.code = answer.error.code;
        error.details = answer.error.details || [];
        throw error;
      });
    });
  }

  var TRACKING_FIELDS = 'cfa_*/d2d_*'; // how a 422 names the CFA/D2D fields as a whole
  var MAX_TRACKING_FIELDS = 50; // a lead holds at most 50 of them
  var MAX_SCANS = 500; // the gateway keeps at most 500 scans per lead: the oldest give way
  var MAX_PAGE = 2048; // and a scan's page of at most 2,048 characters: a longer path is cut, never refused for good

  function cut(text, length) {
    // No NUL and no lone surrogate anywhere (U+FFFD in its place): either would be refused, and kept in the tab it
    // would refuse every later write.
    var clean = String(text).replace(/\u0000/g, '');
    if (typeof clean.toWellFormed === 'function') clean = clean.toWellFormed();
    var kept = clean.slice(0, length);
    // Never half an emoji at the cut.
    return /[\ud800-\udbff]$/.test(kept) ? kept.slice(0, -1) : kept;
  }

  function isTracking(name) {
    return /^(cfa|d2d)_/.test(name);
  }

  /**
   * What the gateway refuses would refuse every later write of the tab (each page's scan too), so it is not kept,
   * whichever call gave it (the gateway keeps what it last took). Too many CFA/D2D fields names none of them: the ones
   * new in this call went over the limit and are dropped, and a tab holding more than a lead takes (an older snippet
   * kept them all) keeps its first 50. A body too large loses its oldest half of scans, a refused scan itself; what
   * names nothing the tab holds loses what this call added. Anything else (offline, rate limited) keeps everything
   * for the next write.
   */
  function forgetRefused(error, newInThisCall, scanned) {
    if (error.status !== 422 && error.status !== 413) return;
    var refusedScans = [];
    var halveScans = false;
    error.details.forEach(function (detail) {
      var named = detail.slice(0, detail.indexOf(':'));
      var scanAt = /^scans\[(\d+)\]/.exec(named);
      if (named === TRACKING_FIELDS) {
        newInThisCall.forEach(function (name) {
          if (isTracking(name)) delete state.contact[name];
        });
        Object.keys(state.contact).filter(isTracking).slice(MAX_TRACKING_FIELDS).forEach(function (name) {
          delete state.contact[name];
        });
      } else if (Object.prototype.hasOwnProperty.call(state.contact, named)) delete state.contact[named];
      else if (scanAt) refusedScans.push(Number(scanAt[1]));
      else if (named === 'body' || named === 'scans') halveScans = true;
      else {
        newInThisCall.forEach(function (name) {
          delete state.contact[name];
        });
        if (scanned) state.scans.pop();
      }
    });
    refusedScans.sort(function (a, b) { return b - a; }).forEach(function (index) {
      state.scans.splice(index, 1);
    });
    if (halveScans) state.scans.splice(0, Math.ceil(state.scans.length / 2));
    save(state);
  }

  function scan(page) {
    state.scans.push({ page: cut(page || location.pathname, MAX_PAGE), at: new Date().toISOString() });
    if (state.scans.length > MAX_SCANS) state.scans.splice(0, state.scans.length - MAX_SCANS);
    save(state);
    return post().catch(function (error) {
      forgetRefused(error, [], true);
      throw error;
    });
  }

  window.ServiceLeads = {
    sessionId: function () { return state.session_id; },
    identify: function (fields) {
      // A field given as null or undefined tells nothing: left out (the gateway refuses a null, and keeps what it holds).
      var given = Object.keys(fields).filter(function (name) { return fields[name] !== null && fields[name] !== undefined; });
      var newInThisCall = given.filter(function (name) { return !(name in state.contact); });
      given.forEach(function (name) { state.contact[name] = fields[name]; });
      save(state);
      return post().catch(function (error) {
        forgetRefused(error, newInThisCall, false);
        throw error;
      });
    },
    scan: scan,
    reset: reset,
    // This page's scan updates an identified lead; a failure must never break the checkout page.
    ready: scan().catch(function () { return null; }),
  };
})();
