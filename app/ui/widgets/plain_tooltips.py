"""Every tooltip in the window is plain text.

Qt shows a tooltip as rich text whenever it looks like HTML (``Qt::mightBeRichText``), and tooltips here carry text
from model files, file names and server answers (a model's path, a damaged file's problem, an engine's log lines).
One application-wide event filter answers every tooltip request itself: it takes the text the widget, the item under
the mouse or the menu action would show, escapes it, and shows that, so ``<b>x</b><img src=...>`` reads exactly so.
The app sets no rich tooltip on purpose; one that needs it would have to be shown by its widget itself.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu, QTabBar, QToolTip, QWidget


def plain_tooltip(text: str) -> str:
    """``text`` as tooltip markup that shows it literally, line breaks kept."""
    import html  # with its table of entities: loaded with the first tooltip, not before the window's first paint

    return f'<p style="white-space:pre-wrap">{html.escape(text, quote=False)}</p>'


def _item_view_tip(view: QAbstractItemView, pos) -> tuple[str, QRect] | None:
    index = view.indexAt(pos)
    if not index.isValid():
        return None
    text = index.data(Qt.ItemDataRole.ToolTipRole)
    return (str(text), view.visualRect(index)) if text else ("", QRect())


def _tip_for(widget: QWidget, pos) -> tuple[str, QRect] | None:
    """(the text Qt would show at ``pos``, the area it belongs to); None where this filter leaves Qt alone."""
    view = widget.parentWidget()
    if isinstance(view, QAbstractItemView) and widget is view.viewport():
        return _item_view_tip(view, pos)
    if isinstance(widget, QMenu):
        action = widget.actionAt(pos)
        if action is None or not widget.toolTipsVisible() or action.toolTip() == action.iconText():
            return None  # Qt shows no tooltip for an action whose tooltip is only its own text
        return action.toolTip(), widget.actionGeometry(action)
    if isinstance(widget, QTabBar):
        tab = widget.tabAt(pos)
        return (widget.tabToolTip(tab), widget.tabRect(tab)) if tab >= 0 else None
    return widget.toolTip(), QRect()


class PlainToolTips(QObject):
    """Install once on the QApplication (:func:`install`)."""

    def eventFilter(self, watched, event) -> bool:
        if event.type() != QEvent.Type.ToolTip or not isinstance(watched, QWidget):
            return False
        tip = _tip_for(watched, event.pos())
        if tip is None:
            return False
        text, area = tip
        if not text:
            return False  # nothing to show: Qt hides any tooltip as before
        QToolTip.showText(event.globalPos(), plain_tooltip(text), watched, area)
        return True


def install(app: QApplication) -> PlainToolTips:
    """Make every tooltip of ``app`` plain text; the filter lives as long as the application."""
    tooltips = app.findChild(PlainToolTips, "", Qt.FindChildOption.FindDirectChildrenOnly)  # the filter is app's child
    if tooltips is None:
        tooltips = PlainToolTips(app)
    app.installEventFilter(tooltips)  # installed once however often this runs (Qt keeps one entry per filter)
    return tooltips
