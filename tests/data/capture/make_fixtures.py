"""Regenerate the small binary fixtures in this folder (not run by the tests).

pip install reportlab python-docx python-pptx && python make_fixtures.py
"""

from pathlib import Path

HERE = Path(__file__).parent


def pdfs():
    from reportlab.lib import pdfencrypt
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    def make(path, encrypt=None):
        c = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt, invariant=1)
        c.setTitle("Quarterly Memory Report")
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 800, "Quarterly Memory Report")
        c.setFont("Helvetica", 11)
        c.drawString(72, 770, "Recall quality improved by twelve percent after hybrid retrieval.")
        c.drawString(72, 755, "Chunk breadcrumbs now name the document and the section.")
        c.showPage()
        c.drawString(72, 800, "Page two: next steps are bundles and digests.")
        c.save()

    make(HERE / "report.pdf")
    make(HERE / "encrypted.pdf", encrypt=pdfencrypt.StandardEncryption("secret", ownerPassword="owner"))


def docx():
    import docx

    d = docx.Document()
    d.core_properties.title = "Design Notes"
    d.add_heading("Design Notes", 1)
    d.add_paragraph("Chunks split on headings; code fences are never cut.")
    d.add_heading("Embeddings", 2)
    t = d.add_table(rows=3, cols=2)
    for r, (k, v) in enumerate([("provider", "dimension"), ("openai", "1536"), ("local", "384")]):
        t.cell(r, 0).text, t.cell(r, 1).text = k, v
    d.add_paragraph("Fully offline with the local model.", style="List Bullet")
    d.add_paragraph("Switching embedders re-indexes.", style="List Bullet")
    d.save(HERE / "notes.docx")


def pptx():
    from pptx import Presentation

    p = Presentation()
    s = p.slides.add_slide(p.slide_layouts[1])
    s.shapes.title.text = "Roadmap"
    s.placeholders[1].text = "Ship capture from anywhere\nShip hybrid recall"
    s2 = p.slides.add_slide(p.slide_layouts[1])
    s2.shapes.title.text = "Risks"
    s2.placeholders[1].text = "Share pages change format"
    s2.notes_slide.notes_text_frame.text = "Speaker note: watch the turbo-stream format."
    p.core_properties.title = "Capture Roadmap"
    p.save(HERE / "roadmap.pptx")


if __name__ == "__main__":
    pdfs()
    docx()
    pptx()
