//! Following the end of the transcript, and letting go of it.

use super::*;

/// Gives the transcript a real scroll box (the tests load no stylesheet).
fn scroll_box_style() -> web_sys::Element {
    let doc = document();
    let style = doc.create_element("style").unwrap();
    style.set_text_content(Some(
        ".transcript { height: 300px; overflow-y: auto; } .row { min-height: 40px; }",
    ));
    doc.head().unwrap().append_child(&style).unwrap();
    style
}

fn at_bottom(el: &web_sys::HtmlElement) -> bool {
    el.scroll_top() as f64 + el.client_height() as f64 >= el.scroll_height() as f64 - 60.0
}

/// A wheel turn upwards (what a person scrolling does first).
fn wheel_up(el: &web_sys::HtmlElement) {
    let init = web_sys::WheelEventInit::new();
    init.set_delta_y(-400.0);
    el.dispatch_event(&web_sys::WheelEvent::new_with_event_init_dict("wheel", &init).unwrap())
        .unwrap();
}

/// The scroll position moves to the top, with its scroll event.
fn move_to_top(el: &web_sys::HtmlElement) {
    el.set_scroll_top(0);
    el.dispatch_event(&web_sys::Event::new("scroll").unwrap())
        .unwrap();
}

/// Scrolls up the way a person does: a wheel turn, then the scroll it causes.
fn scroll_to_top(el: &web_sys::HtmlElement) {
    wheel_up(el);
    move_to_top(el);
}

fn fill_transcript(m: &Mounted, n: usize) {
    for i in 0..n {
        m.store.apply_now(assistant(
            &format!("msg_{i}"),
            &format!("a-{i}"),
            json!({"type": "text", "text": format!("Line {i} of a long session.")}),
        ));
    }
}

#[wasm_bindgen_test]
async fn sending_while_scrolled_up_brings_the_new_message_into_view() {
    let style = scroll_box_style();
    let m = mount(false, || view! { <Transcript /> <Composer /> });
    m.store.conn.set(ConnState::Live);
    fill_transcript(&m, 300);
    frames(4).await;
    let scroller = m.one("[data-testid=transcript]");
    assert!(at_bottom(&scroller), "starts at the bottom");
    scroll_to_top(&scroller);
    frames(3).await;
    assert!(!at_bottom(&scroller));
    let id = m.store.send_prompt("the newest prompt").unwrap();
    frames(6).await;
    let sel = format!("[data-testid=message][data-uuid='{id}']");
    assert_eq!(
        m.all(&sel).len(),
        1,
        "the sent message is rendered (virtualized list)"
    );
    assert!(at_bottom(&scroller), "the transcript scrolled to the end");
    // The DOM stays bounded.
    assert!(m.all("[data-testid=message]").len() < 150);
    style.remove();
}

#[wasm_bindgen_test]
async fn new_content_while_scrolled_up_offers_jump_to_latest() {
    let style = scroll_box_style();
    let (m, scroller) = a_new_row_after_a_move_up(wheel_up).await;
    assert!(!at_bottom(&scroller), "reading position is kept");
    let jump = m.one("[data-testid=jump-to-latest]");
    jump.click();
    frames(6).await;
    assert!(at_bottom(&scroller));
    assert_eq!(m.all("[data-testid=message][data-uuid=a-new]").len(), 1);
    assert!(m.all("[data-testid=jump-to-latest]").is_empty());
    style.remove();
}

/// A 200-row transcript following the bottom, with no "jump to latest": `before` runs, the scroll
/// position moves to the top (with its scroll event), then a new row (`a-new`) arrives.
async fn a_new_row_after_a_move_up(
    before: impl FnOnce(&web_sys::HtmlElement),
) -> (Mounted, web_sys::HtmlElement) {
    let m = mount(false, || view! { <Transcript /> });
    fill_transcript(&m, 200);
    frames(4).await;
    let scroller = m.one("[data-testid=transcript]");
    assert!(at_bottom(&scroller), "starts at the bottom");
    assert!(m.all("[data-testid=jump-to-latest]").is_empty());
    before(&scroller);
    move_to_top(&scroller);
    frames(3).await;
    m.store.apply_now(assistant(
        "msg_new",
        "a-new",
        json!({"type": "text", "text": "Something new"}),
    ));
    frames(6).await;
    (m, scroller)
}

/// [`a_new_row_after_a_move_up`]: (back at the bottom, "jump to latest" offered); the new row is
/// rendered either way once the list is at the bottom.
async fn after_a_move_up(before: impl FnOnce()) -> (bool, bool) {
    let style = scroll_box_style();
    let (m, scroller) = a_new_row_after_a_move_up(|_| before()).await;
    let followed = at_bottom(&scroller);
    if followed {
        assert_eq!(m.all("[data-testid=message][data-uuid=a-new]").len(), 1);
    }
    let offered = !m.all("[data-testid=jump-to-latest]").is_empty();
    style.remove();
    (followed, offered)
}

#[wasm_bindgen_test]
async fn the_browser_moving_the_scroll_position_does_not_stop_following() {
    // Replacing a large row can leave the content briefly shorter; the browser clamps the scroll
    // position, and the scroll event arrives after the content has grown back. No wheel, touch or
    // key came first, so the transcript keeps following.
    assert_eq!(
        after_a_move_up(|| {}).await,
        (true, false),
        "still following, no 'jump to latest': the person never scrolled"
    );
}

#[wasm_bindgen_test]
async fn page_up_anywhere_but_a_text_field_lets_go_of_the_bottom() {
    let key = |target: &web_sys::EventTarget| {
        let init = web_sys::KeyboardEventInit::new();
        init.set_key("PageUp");
        init.set_bubbles(true);
        target
            .dispatch_event(
                &web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init)
                    .unwrap(),
            )
            .unwrap();
    };
    // Keyboard scrolling does not need focus on the transcript: the key reaches the page.
    assert_eq!(
        after_a_move_up(|| key(&document().body().unwrap())).await,
        (false, true),
        "the reading position is kept and 'jump to latest' offered"
    );
    // In a text field PageUp moves the caret; a move of the list after it is the browser's.
    let field = document().create_element("textarea").unwrap();
    document().body().unwrap().append_child(&field).unwrap();
    assert_eq!(after_a_move_up(|| key(&field)).await, (true, false));
    field.remove();
}
